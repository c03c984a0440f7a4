import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0019_connector_credential_mode',
  async up(db) {
    // docs/connectors.md, Credential modes: 'shared' (one credential for the instance, the
    // behaviour so far) or 'per_user' (each member links their own upstream account).
    await db.schema
      .alterTable('connector_instances')
      .addColumn('credential_mode', 'text', (c) => c.notNull().defaultTo('shared'))
      .execute();
    // A member's own credential for a per_user instance: sealed with the instance, the user,
    // the type and the origin bound in. Gone with the instance or the user; a member's removal
    // deletes theirs too (connectors' member hook).
    await db.schema
      .createTable('connector_user_credentials')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('instance_id', 'text', (c) => c.notNull().references('connector_instances.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('cred_type', 'text', (c) => c.notNull())
      .addColumn('sealed_value', 'text', (c) => c.notNull())
      .addColumn('origin', 'text')
      .addColumn('scopes', 'text')
      .addColumn('expires_at', 'text')
      .addColumn('refresh_claim', 'text')
      .addColumn('refresh_claimed_until', 'text')
      // Why the link must be made again (a refresh refused, the server answering 401); null: usable.
      .addColumn('relink_reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('rotated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('connector_user_credentials_owner')
      .unique()
      .on('connector_user_credentials')
      .columns(['instance_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('connector_user_credentials_user')
      .on('connector_user_credentials')
      .columns(['user_id'])
      .execute();
    // The refresh job's scan, as for shared credentials.
    await db.schema
      .createIndex('connector_user_credentials_due')
      .on('connector_user_credentials')
      .columns(['cred_type', 'expires_at'])
      .execute();
    await db.schema
      .createIndex('connector_user_credentials_claim')
      .on('connector_user_credentials')
      .columns(['refresh_claim'])
      .execute();
  },
};
