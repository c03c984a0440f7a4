import type { Kysely } from 'kysely';
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
 * that records it (kysely's Migrator does not wrap SQLite migrations). Refuses a database
 * that already holds migrations this binary does not know: it was written by a newer one.
 */
export async function migrate(db: Kysely<DB>, migrations: readonly Migration[], now: () => Date = () => new Date()): Promise<MigrationResult> {
  await ensureTable(db);
  const done = new Set((await db.selectFrom('schema_migrations').select('id').execute()).map((r) => r.id));
  const known = new Set(migrations.map((m) => m.id));
  const unknown = [...done].filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new MigrationError(`the database was migrated by a newer gantry (unknown migrations: ${unknown.sort().join(', ')}); upgrade gantry`);
  }
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.id)) continue;
    await db.transaction().execute(async (trx) => {
      // Another process may have applied it since we looked: the primary key makes that a no-op.
      const again = await trx.selectFrom('schema_migrations').select('id').where('id', '=', migration.id).executeTakeFirst();
      if (again) return;
      await migration.up(trx);
      await trx.insertInto('schema_migrations').values({ id: migration.id, applied_at: now().toISOString() }).execute();
      applied.push(migration.id);
    });
  }
  return { applied, current: migrations.at(-1)?.id ?? null };
}

/** Migration ids recorded in the database, oldest first. */
export async function appliedMigrations(db: Kysely<DB>): Promise<string[]> {
  await ensureTable(db);
  const rows = await db.selectFrom('schema_migrations').select('id').orderBy('id').execute();
  return rows.map((r) => r.id);
}

