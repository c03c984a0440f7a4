import { sql } from 'kysely';
import { engineOf } from '../src/db/engine.js';
import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0022_cluster_limits_keyring',
  async up(db) {
    const postgres = engineOf(db) === 'postgres';
    // The security rate limits' counters, shared by every node on PostgreSQL (docs/postgres.md,
    // Rate limits). Unlogged there: a crash forgets the windows, which only forgives.
    let limits = db.schema.createTable('rate_limit_windows');
    if (postgres) limits = limits.modifyFront(sql`unlogged`);
    await limits
      .addColumn('bucket', 'text', (c) => c.primaryKey())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addColumn('reset_at_ms', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('rate_limit_windows_reset').on('rate_limit_windows').columns(['reset_at_ms']).execute();
    // The credential keyring of several nodes: each key sealed under the key-encryption key
    // every node gets from GANTRY_SECRET_CREDENTIAL_KEY (docs/postgres.md, Secrets).
    await db.schema
      .createTable('credential_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('sealed_key', 'text', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },
};
