import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.js';

/** What a store function runs on: the database or an open transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;

/**
 * Runs fn in a transaction, which on SQLite begins IMMEDIATE (connection.ts): it holds the
 * write lock from the start. Never await network I/O inside: one connection serves everyone,
 * and other processes wait for the lock.
 */
export function inTransaction<T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(fn);
}

/** Booleans live as 0/1 in SQLite (and map to booleans in PostgreSQL later). */
export const toBool = (value: number | boolean | null | undefined): boolean => value === 1 || value === true;
