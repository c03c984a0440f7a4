import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0010_connector_credential_origin',
  async up(db) {
    // The origin (scheme://host:port) a credential was stored for; bound into the sealed
    // value's additional data, and checked before every outbound call (docs/connectors.md).
    // Credentials stored before this migration have none and are bound by the update rule only.
    await db.schema.alterTable('connector_credentials').addColumn('origin', 'text').execute();
  },
};
