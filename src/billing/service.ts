import { DomainError, badRequest } from '../http/errors.js';
import type { Principal } from '../http/auth.js';
import { inTransaction } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { BillingAdapter } from '../accounts/billing.js';
import { WALLET_CURRENCY } from '../wallet/service.js';
import { ProviderCallError, type BillingProvider } from './provider.js';
import { lazyStripeProvider } from './lazy-stripe.js';
import { createBillingWebhook } from './webhook.js';
import * as store from './store.js';
import type { BillingDeps } from './types.js';

/** The currency a top-up may be paid in: the wallet's, lower-case as Stripe writes it. */
const TOP_UP_CURRENCY = WALLET_CURRENCY.toLowerCase();
const CUSTOMER_ID = /^cus_[A-Za-z0-9_]{1,250}$/;
const SEAT_ITEM_ID = /^si_[A-Za-z0-9_]{1,250}$/;

const notConfigured = () =>
  new DomainError('NOT_CONFIGURED', 'Billing is not configured on this server (GANTRY_STRIPE_SECRET_KEY)');

/**
 * Billing: wallet top-ups through the provider's hosted checkout, the account-to-customer
 * links, and the seat releases member removal asks for (docs/billing.md). Without a provider
 * every operation answers 503 NOT_CONFIGURED and member removal reports billing_not_configured.
 */
export function createBillingService(kernel: Kernel, deps: BillingDeps) {
  const { db, clock, config, logger } = kernel;
  const { stripe } = config.billing;
  const provider: BillingProvider | null = stripe
    ? lazyStripeProvider(stripe, config.billing.webhookToleranceSec, logger)
    : null;

  function requireProvider(): BillingProvider {
    if (!provider) throw notConfigured();
    return provider;
  }

  /** The account audit rows of a user's top-up go to: X-Account-Id, else the oldest membership, else none. */
  async function auditAccountOf(principal: Principal, headerAccountId: string | null): Promise<string | null> {
    try {
      return (await deps.accounts.access.current(principal, headerAccountId)).accountId;
    } catch (err) {
      if (headerAccountId === null && err instanceof DomainError && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  }

  /** What accounts calls after a removal with releaseSeat=true commits (never inside a transaction). */
  const seatAdapter: BillingAdapter | null = provider && {
    name: provider.name,
    async releaseSeat({ releaseId, accountId, billedMembers }) {
      const link = await store.findAccountLink(db, accountId);
      if (!link?.seat_item_id) return { accepted: false, reason: 'billing_account_not_linked' };
      return provider.lowerSeatQuantity({ seatItemId: link.seat_item_id, releaseId, billedMembers });
    },
  };

  return {
    configured: provider !== null,
    seatAdapter,
    webhook: createBillingWebhook(kernel, deps, provider),

    /**
     * Starts a wallet top-up: a Checkout Session in payment mode at the provider, then the
     * checkout row and its audit entry (the provider call happens before the transaction).
     */
    async checkout(principal: Principal, headerAccountId: string | null, input: { amount: number; currency?: string }) {
      const active = requireProvider();
      const { topUpMinAmount: min, topUpMaxAmount: max } = config.billing;
      if (!Number.isSafeInteger(input.amount) || input.amount < min || input.amount > max)
        throw badRequest(`amount must be a whole number of minor units from ${min} to ${max}`, [
          { field: 'amount', message: `between ${min} and ${max}`, type: 'number.range' },
        ]);
      const currency = (input.currency ?? TOP_UP_CURRENCY).toLowerCase();
      if (currency !== TOP_UP_CURRENCY)
        throw badRequest(`currency must be ${TOP_UP_CURRENCY}, the wallet currency`, [
          { field: 'currency', message: `only ${TOP_UP_CURRENCY}`, type: 'any.only' },
        ]);
      const accountId = await auditAccountOf(principal, headerAccountId);
      const user = await deps.identity.getUser(principal.userId);
      const link = accountId ? await store.findAccountLink(db, accountId) : undefined;
      const checkoutId = newId();
      const web = config.webUrl;
      let session: Awaited<ReturnType<BillingProvider['createTopUpCheckout']>>;
      try {
        session = await active.createTopUpCheckout({
          checkoutId,
          userId: user.id,
          email: user.email,
          customerId: link?.customer_id ?? null,
          amount: input.amount,
          currency,
          successUrl: `${web}/settings/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
          cancelUrl: `${web}/settings/billing?checkout=cancelled`,
        });
      } catch (err) {
        if (err instanceof ProviderCallError)
          throw new DomainError('UPSTREAM_FAILED', `The billing provider did not start the checkout (${err.reason})`);
        throw err;
      }
      await inTransaction(db, async (trx) => {
        const now = clock.now().toISOString();
        await store.insertCheckout(trx, {
          id: checkoutId,
          provider: active.name,
          session_id: session.sessionId,
          user_id: user.id,
          account_id: accountId,
          amount: input.amount,
          currency,
          status: 'open',
          created_at: now,
          expires_at: session.expiresAt.toISOString(),
          credited_at: null,
          credit_event_id: null,
        });
        if (accountId)
          await deps.audit.record(
            trx,
            { userId: user.id },
            {
              accountId,
              action: 'billing.checkout_created',
              targetId: user.id,
              metadata: {
                checkoutId,
                provider: active.name,
                sessionId: session.sessionId,
                amount: input.amount,
                currency,
              },
            },
          );
      });
      return {
        checkoutUrl: session.checkoutUrl,
        sessionId: session.sessionId,
        expiresAt: session.expiresAt.toISOString(),
        amount: input.amount,
        currency,
      };
    },

    /** Links an account to its customer and seat subscription item (operator, `gantry account billing`). */
    async linkAccount(accountId: string, input: { customerId?: string | null; seatItemId?: string | null }) {
      const active = requireProvider();
      if (input.customerId && !CUSTOMER_ID.test(input.customerId))
        throw badRequest('customer must be a Stripe customer id (cus_...)');
      if (input.seatItemId && !SEAT_ITEM_ID.test(input.seatItemId))
        throw badRequest('seat item must be a Stripe subscription item id (si_...)');
      await deps.accounts.show(accountId);
      return inTransaction(db, async (trx) => {
        const current = await store.findAccountLink(trx, accountId);
        const row = {
          account_id: accountId,
          provider: active.name,
          customer_id: input.customerId === undefined ? (current?.customer_id ?? null) : input.customerId,
          seat_item_id: input.seatItemId === undefined ? (current?.seat_item_id ?? null) : input.seatItemId,
          updated_at: clock.now().toISOString(),
        };
        await store.upsertAccountLink(trx, row);
        await deps.audit.record(trx, null, {
          accountId,
          action: 'billing.account_linked',
          targetId: accountId,
          metadata: { provider: row.provider, customerId: row.customer_id, seatItemId: row.seat_item_id },
        });
        return presentLink(row);
      });
    },

    /** An account's link, or nulls when it has none. */
    async accountLink(accountId: string) {
      await deps.accounts.show(accountId);
      const row = await store.findAccountLink(db, accountId);
      return row
        ? presentLink(row)
        : { accountId, provider: provider?.name ?? null, customerId: null, seatItemId: null, updatedAt: null };
    },
  };
}

function presentLink(row: {
  account_id: string;
  provider: string;
  customer_id: string | null;
  seat_item_id: string | null;
  updated_at: string;
}) {
  return {
    accountId: row.account_id,
    provider: row.provider,
    customerId: row.customer_id,
    seatItemId: row.seat_item_id,
    updatedAt: row.updated_at,
  };
}
