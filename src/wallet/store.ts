import type { Insertable } from 'kysely';
import type { Executor } from '../db/tx.js';
import type { WalletLedgerTable } from './tables.js';

/** Creates the user's wallet at zero unless it exists. */
export const ensureWallet = (db: Executor, userId: string, currency: string, at: string) =>
  db
    .insertInto('wallets')
    .values({ user_id: userId, balance_micros: 0, currency, updated_at: at })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();

export const findWallet = (db: Executor, userId: string) =>
  db.selectFrom('wallets').selectAll().where('user_id', '=', userId).executeTakeFirst();

export const addToBalance = (db: Executor, userId: string, micros: number, at: string) =>
  db
    .updateTable('wallets')
    .set((eb) => ({ balance_micros: eb('balance_micros', '+', micros), updated_at: at }))
    .where('user_id', '=', userId)
    .execute();

/**
 * Takes `micros` only if the balance covers them, in one conditional UPDATE, so two concurrent
 * debits can never spend the same funds. True when it did.
 */
export async function takeFromBalance(db: Executor, userId: string, micros: number, at: string): Promise<boolean> {
  const result = await db
    .updateTable('wallets')
    .set((eb) => ({ balance_micros: eb('balance_micros', '-', micros), updated_at: at }))
    .where('user_id', '=', userId)
    .where('balance_micros', '>=', micros)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export const insertLedgerEntry = (db: Executor, row: Insertable<WalletLedgerTable>) =>
  db.insertInto('wallet_ledger').values(row).execute();

/** A user's ledger, newest first. */
export const listLedger = (db: Executor, userId: string, limit: number) =>
  db
    .selectFrom('wallet_ledger')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
