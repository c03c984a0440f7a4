import { DomainError, badRequest } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import * as store from './store.js';

/** Every wallet holds US dollars; its minor unit is the cent (two decimals). */
export const WALLET_CURRENCY = 'USD';
const MICROS = 1_000_000;
const MICROS_PER_MINOR_UNIT = MICROS / 100;

export const toMicros = (amount: number): number => Math.round(amount * MICROS);
const fromMicros = (micros: number): number => micros / MICROS;
/** Minor units (cents) of the wallet currency as micros: exact, both are integers. */
export const minorUnitsToMicros = (amount: number): number => amount * MICROS_PER_MINOR_UNIT;

/** Each user's prepaid balance, changed only through the ledger (credit, debit). */
export function createWalletService(kernel: Kernel, deps: { identity: Pick<IdentityService, 'userExists'> }) {
  const { db, clock } = kernel;

  async function ensure(executor: Executor, userId: string): Promise<void> {
    await store.ensureWallet(executor, userId, WALLET_CURRENCY, clock.now().toISOString());
  }

  async function get(userId: string, executor: Executor = db) {
    const row = await store.findWallet(executor, userId);
    return row
      ? { balance: fromMicros(row.balance_micros), currency: row.currency, updatedAt: row.updated_at }
      : { balance: 0, currency: WALLET_CURRENCY, updatedAt: null as string | null };
  }

  /**
   * Adds `micros` inside the caller's transaction, with its ledger row; `reference` names what
   * paid for it (a checkout session), so the ledger shows where every credit came from.
   */
  async function creditWithin(
    executor: Executor,
    userId: string,
    micros: number,
    reason: string,
    reference: string | null,
  ): Promise<void> {
    if (!Number.isSafeInteger(micros) || micros <= 0)
      throw badRequest('a credit must be a positive whole number of micros');
    await ensure(executor, userId);
    const now = clock.now().toISOString();
    await store.addToBalance(executor, userId, micros, now);
    await store.insertLedgerEntry(executor, {
      id: newId(),
      user_id: userId,
      amount_micros: micros,
      reason,
      reference,
      created_at: now,
    });
  }

  return {
    get,

    /** Adds funds (operator action); atomic with its ledger row. */
    async credit(userId: string, amount: number, reason = 'credit') {
      if (!Number.isFinite(amount) || amount <= 0) throw badRequest('amount must be a positive number');
      return inTransaction(db, async (trx) => {
        if (!(await deps.identity.userExists(userId, trx))) throw new DomainError('NOT_FOUND', 'User not found');
        await creditWithin(trx, userId, toMicros(amount), reason, null);
        return get(userId, trx);
      });
    },

    creditWithin,

    /** The balance and the newest ledger rows (CLI `wallet show`). */
    async show(userId: string, limit = 50) {
      if (!(await deps.identity.userExists(userId, db))) throw new DomainError('NOT_FOUND', 'User not found');
      const [wallet, rows] = await Promise.all([get(userId), store.listLedger(db, userId, limit)]);
      return {
        userId,
        ...wallet,
        ledger: rows.map((r) => ({
          id: r.id,
          amount: fromMicros(r.amount_micros),
          reason: r.reason,
          reference: r.reference,
          createdAt: r.created_at,
        })),
      };
    },

    /**
     * Takes `micros` from the wallet inside the caller's transaction, or throws 402
     * INSUFFICIENT_FUNDS. The balance check and the debit are one conditional UPDATE, so two
     * concurrent debits can never spend the same funds.
     */
    async debit(
      executor: Executor,
      userId: string,
      micros: number,
      reason: string,
      reference: string | null,
    ): Promise<void> {
      if (micros <= 0) return;
      const now = clock.now().toISOString();
      if (!(await store.takeFromBalance(executor, userId, micros, now)))
        throw new DomainError('INSUFFICIENT_FUNDS', 'The wallet balance is too low for this operation');
      await store.insertLedgerEntry(executor, {
        id: newId(),
        user_id: userId,
        amount_micros: -micros,
        reason,
        reference,
        created_at: now,
      });
    },
  };
}

export type WalletService = ReturnType<typeof createWalletService>;
