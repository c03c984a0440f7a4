/** Every SQL statement of the accounts domain's tables, one file per concept. */
export * from './accounts.js';
export * from './members.js';
export * from './workspaces.js';
export * from './invitations.js';
export * from './ownership.js';
export * from './api-keys.js';
export * from './seats.js';
export * from './deletion.js';
