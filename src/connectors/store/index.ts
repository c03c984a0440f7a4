/** The connectors domain's SQL, one file per table. */
export { approvalStore } from './approvals.js';
export { credentialStore } from './credentials.js';
export { definitionStore } from './definitions.js';
export { instanceStore } from './instances.js';
export { oauthStateStore } from './oauth-states.js';
export { toolNameStore } from './tool-names.js';
export { toolStore } from './tools.js';
export { userCredentialStore } from './user-credentials.js';
