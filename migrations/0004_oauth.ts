import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0004_oauth',
  async up(db) {
    await db.schema
      .createTable('oauth_clients')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'text')
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('oauth_grants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .addColumn('revoke_reason', 'text')
      .execute();
    await db.schema
      .createIndex('oauth_grants_user_client')
      .on('oauth_grants')
      .columns(['user_id', 'client_id'])
      .execute();
    await db.schema.createIndex('oauth_grants_client').on('oauth_grants').columns(['client_id']).execute();

    await db.schema
      .createTable('oauth_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('consumed_at', 'text')
      .execute();
    await db.schema.createIndex('oauth_codes_expires').on('oauth_codes').columns(['expires_at']).execute();

    await db.schema
      .createTable('oauth_refresh_tokens')
      // Keyed by the hash itself: every b-tree is a write per rotation (PERFORMANCE.md).
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('consumed_at', 'text')
      .execute();
    await db.schema
      .createIndex('oauth_refresh_tokens_grant')
      .on('oauth_refresh_tokens')
      .columns(['grant_id'])
      .execute();

    await db.schema
      .createTable('oauth_revoked_access_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('grant_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('oauth_consents')
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'client_id'])
      .execute();

    await db.schema
      .createTable('oauth_browser_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      // The identity session behind the page sign-in: revoking it (reset, removal) ends this too.
      .addColumn('session_id', 'text', (c) => c.notNull().references('auth_sessions.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
  },
};
