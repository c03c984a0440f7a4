import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0015_oauth_client_registration',
  async up(db) {
    // How a client came to be (docs/oauth.md, Self-registered clients): `cli` (every client
    // before this migration), `dynamic` (RFC 7591 registration) or `metadata_document` (a Client
    // ID Metadata Document, whose URL is the client's id). Self-registered clients that never
    // reach a grant are removed by the purge job.
    await db.schema
      .alterTable('oauth_clients')
      .addColumn('registration', 'text', (c) => c.notNull().defaultTo('cli'))
      .execute();
    // Until when a metadata document's copy in the row may be used without fetching it again.
    await db.schema.alterTable('oauth_clients').addColumn('metadata_expires_at', 'text').execute();
    await db.schema
      .createIndex('oauth_clients_registration')
      .on('oauth_clients')
      .columns(['registration', 'created_at'])
      .execute();
  },
};
