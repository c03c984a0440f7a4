import type { Kysely, Transaction } from 'kysely';
import { engineOf } from './engine.js';
import type { DB } from './schema.js';

/** What a store function runs on: the database or an open transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;

/** Attempts of one transaction on PostgreSQL before a serialization failure is the caller's. */
const MAX_ATTEMPTS = 8;

/**
 * Runs fn in a transaction with the guarantee the code was written for: as if it ran alone
 * (docs/kernel.md, Transactions). On SQLite it begins IMMEDIATE (connection.ts): it holds the
 * write lock from the start and one connection serves everyone. On PostgreSQL transactions of
 * the pool run side by side, so it runs SERIALIZABLE and runs fn again when the database
 * aborts it for a conflict (SQLSTATE 40001) or a deadlock (40P01) (docs/postgres.md,
 * Transactions). fn may therefore run more than once: it must only touch the database. Never
 * await network I/O inside.
 */
export async function inTransaction<T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  if (engineOf(db) === 'sqlite') return db.transaction().execute(fn);
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().setIsolationLevel('serializable').execute(fn);
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !isRetryable(err)) throw err;
      // Jittered and growing, so the transactions that collided do not collide again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** attempt * 2));
    }
  }
}

function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/** Booleans live as 0/1 integers on both engines (docs/postgres.md, Schema). */
export const toBool = (value: number | boolean | null | undefined): boolean => value === 1 || value === true;
