import { DomainError, badRequest } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';

export const WALLET_CURRENCY = 'USD';
const MICROS = 1_000_000;

export const toMicros = (amount: number): number => Math.round(amount * MICROS);
export const fromMicros = (micros: number): number => micros / MICROS;

/** Each user's prepaid balance, changed only through the ledger (credit, debit). */
export function createWalletService(kernel: Kernel) {
  const { db, clock } = kernel;

  async function ensure(executor: Executor, userId: string): Promise<void> {
    await executor
      .insertInto('wallets')
      .values({ user_id: userId, balance_micros: 0, currency: WALLET_CURRENCY, updated_at: clock.now().toISOString() })
      .onConflict((oc) => oc.column('user_id').doNothing())
      .execute();
  }

  async function get(userId: string, executor: Executor = db) {
    const row = await executor.selectFrom('wallets').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row
      ? { balance: fromMicros(row.balance_micros), currency: row.currency, updatedAt: row.updated_at }
      : { balance: 0, currency: WALLET_CURRENCY, updatedAt: null as string | null };
  }

  return {
    get,

    /** Adds funds (operator action); atomic with its ledger row. */
    async credit(userId: string, amount: number, reason = 'credit') {
      if (!Number.isFinite(amount) || amount <= 0) throw badRequest('The amount must be a positive number');
      return inTransaction(db, async (trx) => {
        const user = await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
        if (!user) throw new DomainError(404, 'NOT_FOUND', 'User not found');
        await ensure(trx, userId);
        const micros = toMicros(amount);
        const now = clock.now().toISOString();
        await trx.updateTable('wallets').set((eb) => ({ balance_micros: eb('balance_micros', '+', micros), updated_at: now })).where('user_id', '=', userId).execute();
        await trx.insertInto('wallet_ledger').values({ id: newId(), user_id: userId, amount_micros: micros, reason, reference: null, created_at: now }).execute();
        return get(userId, trx);
      });
    },

    /**
     * Takes `micros` from the wallet inside the caller's transaction, or throws 402
     * INSUFFICIENT_FUNDS. The balance check and the debit are one conditional UPDATE, so two
     * concurrent debits can never spend the same funds.
     */
    async debit(executor: Executor, userId: string, micros: number, reason: string, reference: string | null): Promise<void> {
      if (micros <= 0) return;
      const now = clock.now().toISOString();
      const result = await executor
        .updateTable('wallets')
        .set((eb) => ({ balance_micros: eb('balance_micros', '-', micros), updated_at: now }))
        .where('user_id', '=', userId)
        .where('balance_micros', '>=', micros)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) throw new DomainError(402, 'INSUFFICIENT_FUNDS', 'The wallet balance is too low for this operation');
      await executor.insertInto('wallet_ledger').values({ id: newId(), user_id: userId, amount_micros: -micros, reason, reference, created_at: now }).execute();
    },
  };
}

export type WalletService = ReturnType<typeof createWalletService>;
