import { sql, type Kysely } from 'kysely';
import type { Migration } from '../../migrations/types.js';
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

/**
 * Applies pending migrations in order, each in its own transaction together with the row
 * that records it (kysely's Migrator does not wrap SQLite migrations). Runs before anything
 * else uses the connection (start-up), which the explicit BEGIN/COMMIT relies on. Refuses a database
 * that already holds migrations this binary does not know: it was written by a newer one.
 */
export async function migrate(
  db: Kysely<DB>,
  migrations: readonly Migration[],
  now: () => Date = () => new Date(),
): Promise<MigrationResult> {
  await ensureTable(db);
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
    // BEGIN IMMEDIATE takes the write lock first: a second process starting on the same
    // fresh database waits (busy_timeout) instead of failing half-way, then finds it applied.
    await sql`begin immediate`.execute(db);
    try {
      const again = await db
        .selectFrom('schema_migrations')
        .select('id')
        .where('id', '=', migration.id)
        .executeTakeFirst();
      if (!again) {
        await migration.up(db);
        await db
          .insertInto('schema_migrations')
          .values({ id: migration.id, applied_at: now().toISOString() })
          .execute();
        applied.push(migration.id);
      }
      await sql`commit`.execute(db);
    } catch (err) {
      await sql`rollback`.execute(db);
      throw err;
    }
  }
  return { applied, current: migrations.at(-1)?.id ?? null };
}

/** Migration ids recorded in the database, oldest first. */
export async function appliedMigrations(db: Kysely<DB>): Promise<string[]> {
  await ensureTable(db);
  const rows = await db.selectFrom('schema_migrations').select('id').orderBy('id').execute();
  return rows.map((r) => r.id);
}
