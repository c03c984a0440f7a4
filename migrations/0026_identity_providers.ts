import type { Migration } from './types.js';

/** Enterprise identity providers: SSO sign-in and ID-JAG grants (docs/identity-providers.md). */
export const migration: Migration = {
  id: '0026_identity_providers',
  async up(db) {
    // The client secret is sealed like connector credentials (src/lib/sealed.ts); the account,
    // when set, is where just-in-time users become members and ID-JAG tokens find a workspace:
    // the operator's workspace of that account when set, else the user's default one. No
    // foreign key on the workspace: deleting it must not fail, and an exchange then refuses.
    await db.schema
      .createTable('idps')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('issuer', 'text', (c) => c.notNull().unique())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_secret_sealed', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.references('accounts.id'))
      .addColumn('workspace_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    // An email domain goes to one IdP at most: the key says so for every node.
    await db.schema
      .createTable('idp_domains')
      .addColumn('domain', 'text', (c) => c.primaryKey())
      .addColumn('idp_id', 'text', (c) => c.notNull().references('idps.id').onDelete('cascade'))
      .execute();
    await db.schema.createIndex('idp_domains_idp').on('idp_domains').columns(['idp_id']).execute();

    // The IdP's subject (`sub`, unique per issuer: OIDC Core 2) linked to a Gantry user.
    await db.schema
      .createTable('idp_links')
      .addColumn('idp_id', 'text', (c) => c.notNull().references('idps.id').onDelete('cascade'))
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idp_links_pk', ['idp_id', 'subject'])
      .execute();
    await db.schema.createIndex('idp_links_user').on('idp_links').columns(['user_id']).execute();

    // What an IdP gave rise to (a sign-in session, an OAuth grant), so removing the IdP ends it.
    await db.schema
      .createTable('idp_issued')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('ref_id', 'text', (c) => c.notNull())
      .addColumn('idp_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idp_issued_pk', ['kind', 'ref_id'])
      .execute();
    await db.schema.createIndex('idp_issued_idp').on('idp_issued').columns(['idp_id']).execute();

    // ID-JAG `jti` values seen (SHA-256 of issuer and jti): single use across nodes is the
    // primary key refusing a second insert; rows go once the assertion has expired.
    await db.schema
      .createTable('idp_used_assertions')
      .addColumn('key_hash', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('idp_used_assertions_expiry')
      .on('idp_used_assertions')
      .columns(['expires_at'])
      .execute();
  },
};
