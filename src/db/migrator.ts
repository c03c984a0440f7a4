import { sql, type Kysely } from 'kysely';
import type { Migration } from '../../migrations/types.js';
import { engineOf } from './engine.js';
import type { DB } from './schema.js';

export class MigrationError extends Error {}

export interface MigrationResult {
  applied: string[];
  current: string | null;
}

async function ensureTable(db: Kysely<DB>): Promise<void> {
  await db.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
}

/** Any 64-bit constant: the advisory lock every Gantry process takes to migrate PostgreSQL. */
const MIGRATION_LOCK_KEY = 7_415_993_118;

/**
 * Runs fn holding the cross-process migration lock, in one transaction. SQLite: BEGIN
 * IMMEDIATE takes the write lock first, so a second process starting on the same fresh
 * database waits (busy_timeout) instead of failing half-way; it runs before anything else uses
 * the connection (start-up), which the explicit BEGIN/COMMIT relies on. PostgreSQL: a
 * transaction-scoped advisory lock, as kysely's own migrator takes there.
 */
async function withMigrationLock<T>(db: Kysely<DB>, fn: (db: Kysely<DB>) => Promise<T>): Promise<T> {
  if (engineOf(db) === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
      return fn(trx);
    });
  }
  await sql`begin immediate`.execute(db);
  try {
    const result = await fn(db);
    await sql`commit`.execute(db);
    return result;
  } catch (err) {
    await sql`rollback`.execute(db);
    throw err;
  }
}

/**
 * Text keys are compared and ordered byte-wise on SQLite; a PostgreSQL database must do the
 * same (keyset pagination, sorted names), which only the C collation does (docs/postgres.md).
 */
async function checkCollation(db: Kysely<DB>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  const { rows } = await sql<{ collation: string }>`
    select datcollate as collation from pg_database where datname = current_database()`.execute(db);
  const collation = rows[0]?.collation ?? '';
  if (collation !== 'C' && collation !== 'POSIX') {
    throw new MigrationError(
      `the PostgreSQL database has collation "${collation}"; gantry needs "C": create it with CREATE DATABASE ... LOCALE 'C' TEMPLATE template0`,
    );
  }
}

/**
 * Applies pending migrations in order, each in its own transaction together with the row
 * that records it (kysely's Migrator does not wrap SQLite migrations). Refuses a database
 * that already holds migrations this binary does not know: it was written by a newer one.
 */
export async function migrate(
  db: Kysely<DB>,
  migrations: readonly Migration[],
  now: () => Date = () => new Date(),
): Promise<MigrationResult> {
  await checkCollation(db);
  await withMigrationLock(db, ensureTable);
  const done = new Set((await db.selectFrom('schema_migrations').select('id').execute()).map((r) => r.id));
  const known = new Set(migrations.map((m) => m.id));
  const unknown = [...done].filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new MigrationError(
      `the database was migrated by a newer gantry (unknown migrations: ${unknown.sort().join(', ')}); upgrade gantry`,
    );
  }
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.id)) continue;
    await withMigrationLock(db, async (locked) => {
      // Another process may have applied it while this one waited for the lock.
      const again = await locked
        .selectFrom('schema_migrations')
        .select('id')
        .where('id', '=', migration.id)
        .executeTakeFirst();
      if (again) return;
      await migration.up(locked);
      await locked
        .insertInto('schema_migrations')
        .values({ id: migration.id, applied_at: now().toISOString() })
        .execute();
      applied.push(migration.id);
    });
  }
  return { applied, current: migrations.at(-1)?.id ?? null };
}

/**
 * What a PostgreSQL node does at start instead of migrating (docs/scaling.md, Deploying):
 * `gantry migrate` is the deploy step, run once per release, not by every node racing at
 * start. A database missing migrations is refused; so is one migrated by a newer gantry,
 * unless `allowNewer` (GANTRY_ALLOW_NEWER_SCHEMA, for the old nodes of a rolling upgrade: the
 * migrations are additive, so they keep working on the new schema).
 */
export async function checkSchema(
  db: Kysely<DB>,
  migrations: readonly Migration[],
  allowNewer: boolean,
): Promise<MigrationResult & { newer: string[] }> {
  await checkCollation(db);
  const { rows } = await sql<{
    present: string | null;
  }>`select to_regclass('schema_migrations')::text as present`.execute(db);
  const done = rows[0]?.present ? await appliedMigrations(db) : [];
  const pending = migrations.map((m) => m.id).filter((id) => !done.includes(id));
  if (pending.length > 0) {
    throw new MigrationError(
      `the database is missing migrations (${pending.join(', ')}); run \`gantry migrate\` first, the deploy step on PostgreSQL`,
    );
  }
  const known = new Set(migrations.map((m) => m.id));
  const newer = done.filter((id) => !known.has(id));
  if (newer.length > 0 && !allowNewer) {
    throw new MigrationError(
      `the database was migrated by a newer gantry (unknown migrations: ${newer.join(', ')}); upgrade gantry, or set GANTRY_ALLOW_NEWER_SCHEMA=1 during a rolling upgrade`,
    );
  }
  return { applied: [], current: migrations.at(-1)?.id ?? null, newer };
}

/** Migration ids recorded in the database, oldest first. */
export async function appliedMigrations(db: Kysely<DB>): Promise<string[]> {
  await ensureTable(db);
  const rows = await db.selectFrom('schema_migrations').select('id').orderBy('id').execute();
  return rows.map((r) => r.id);
}
