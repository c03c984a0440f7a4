import { PostgresAdapter } from 'kysely';

/** The two databases Gantry runs on (docs/postgres.md). */
export type Engine = 'sqlite' | 'postgres';

/** Anything kysely can run a query on: the database, a transaction, or a migration's handle. */
interface HasAdapter {
  getExecutor(): { adapter: unknown };
}

/** Which engine a database handle or transaction talks to, for the few statements that differ. */
export function engineOf(db: HasAdapter): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * A unique or primary key violation on either engine: better-sqlite3's SQLITE_CONSTRAINT_* or
 * PostgreSQL's SQLSTATE 23505. Callers map it to 409 (docs/kernel.md, Errors).
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
