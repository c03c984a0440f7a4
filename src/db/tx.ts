import type { Kysely, Transaction } from 'kysely';
import { engineOf } from './engine.js';
import { insideTransaction } from './transaction-guard.js';
import type { DB } from './schema.js';

/** What a store function runs on: the database or an open transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;

/**
 * Attempts of one transaction on PostgreSQL before a serialization failure is the caller's:
 * of N transactions colliding on one row each round lets at least one commit, so N requests at
 * once on one wallet or account need up to N rounds.
 */
const MAX_ATTEMPTS = 20;
/** Upper bound of the random wait before another attempt, in ms: short, the conflict has gone. */
const MAX_BACKOFF_MS = 32;

/**
 * Runs fn in a transaction with the guarantee the code was written for: as if it ran alone
 * (docs/kernel.md, Transactions). On SQLite it begins IMMEDIATE (connection.ts): it holds the
 * write lock from the start and one connection serves everyone. On PostgreSQL transactions of
 * the pool run side by side, so it runs SERIALIZABLE and runs fn again when the database
 * aborts it for a conflict (SQLSTATE 40001) or a deadlock (40P01) (docs/postgres.md,
 * Transactions). fn may therefore run more than once: it must only touch the database. Never
 * await network I/O inside.
 *
 * `isolation: 'read committed'` is for a transaction whose guarantee rests on its own
 * conditional updates (`... where consumed_at is null`, which PostgreSQL re-checks on the row
 * after waiting for its lock) rather than on what it read: SERIALIZABLE would also abort it
 * for false conflicts (its predicate locks cover whole index pages), each a retry under load.
 * SQLite ignores it (one writer at a time).
 */
export async function inTransaction<T>(
  db: Kysely<DB>,
  fn: (trx: Transaction<DB>) => Promise<T>,
  options: { isolation?: 'serializable' | 'read committed' } = {},
): Promise<T> {
  const sqlite = engineOf(db) === 'sqlite';
  const isolation = options.isolation ?? 'serializable';
  for (let attempt = 1; ; attempt++) {
    const callbacks: Array<() => void> = [];
    const run = (trx: Transaction<DB>) => {
      committed.set(trx, callbacks);
      return insideTransaction(db, () => fn(trx));
    };
    try {
      const result = sqlite
        ? await db.transaction().execute(run)
        : await db.transaction().setIsolationLevel(isolation).execute(run);
      for (const callback of callbacks) callback();
      return result;
    } catch (err) {
      if (sqlite) throw err;
      if (attempt >= MAX_ATTEMPTS || !isRetryable(err)) throw err;
      // Jittered and growing, so the transactions that collided do not collide again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, MAX_BACKOFF_MS)));
    }
  }
}

/** Callbacks of the open transactions, run once each commits (dropped on rollback or retry). */
const committed = new WeakMap<Transaction<DB>, Array<() => void>>();

/**
 * Runs fn once executor's transaction has committed, or now when executor is not a
 * transaction of inTransaction. Change listeners go here: run before COMMIT, a reader on
 * another pooled connection could rebuild a cache from the old rows (docs/postgres.md).
 */
export function afterCommit(executor: Executor, fn: () => void): void {
  const callbacks = committed.get(executor as Transaction<DB>);
  if (callbacks) callbacks.push(fn);
  else fn();
}

function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/** Booleans live as 0/1 integers on both engines (docs/postgres.md, Schema). */
export const toBool = (value: number | boolean | null | undefined): boolean => value === 1 || value === true;
