import { DomainError, badRequest } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import type { Kernel } from '../kernel.js';
import { minorUnitsToMicros } from '../wallet/service.js';
import { InvalidWebhookError, type BillingEvent, type BillingProvider } from './provider.js';
import type { BillingDeps } from './types.js';
import * as store from './store.js';

type TopUpPaid = Extract<BillingEvent, { kind: 'top_up_paid' }>;

/**
 * The provider's webhook (docs/billing.md, Webhook). The signature and its age are checked on
 * the raw bytes before anything is parsed; a bad one is a 400 and nothing changes. Each event
 * is applied once: its id is inserted in the same transaction as its effect, and a redelivery
 * (sequential or concurrent: transactions are serialized on the one connection) finds it.
 *   a paid checkout session: credits the wallet once, with a ledger row naming the session;
 *   a subscription update carrying a release id: confirms that seat release;
 *   anything else: acknowledged, nothing applied.
 */
export function createBillingWebhook(kernel: Kernel, deps: BillingDeps, provider: BillingProvider | null) {
  const { db, clock, logger } = kernel;

  async function applyTopUp(trx: Executor, active: BillingProvider, event: TopUpPaid): Promise<boolean> {
    const checkout = await store.findCheckoutBySession(trx, active.name, event.sessionId);
    if (!checkout) {
      logger.info('billing webhook: checkout session not started here', { eventId: event.id });
      return false;
    }
    if (checkout.amount !== event.amount || checkout.currency !== event.currency) {
      logger.warn('billing webhook: paid amount differs from the checkout; not credited', {
        eventId: event.id,
        checkoutId: checkout.id,
      });
      return false;
    }
    const now = clock.now().toISOString();
    if (!(await store.markCheckoutCredited(trx, checkout.id, event.id, now))) return false;
    await deps.wallet.creditWithin(
      trx,
      checkout.user_id,
      minorUnitsToMicros(checkout.amount),
      `${active.name}_top_up`,
      checkout.session_id,
    );
    if (checkout.account_id)
      await deps.audit.record(trx, null, {
        accountId: checkout.account_id,
        action: 'billing.wallet_credited',
        targetId: checkout.user_id,
        metadata: {
          checkoutId: checkout.id,
          provider: active.name,
          sessionId: checkout.session_id,
          eventId: event.id,
          amount: checkout.amount,
          currency: checkout.currency,
        },
      });
    return true;
  }

  return {
    async receive(providerName: string, rawBody: Buffer, signature: string | undefined) {
      if (!provider || provider.name !== providerName || !provider.receivesWebhooks)
        throw new DomainError(
          'NOT_CONFIGURED',
          `The ${providerName} webhook is not configured on this server (GANTRY_STRIPE_SECRET_KEY, GANTRY_STRIPE_WEBHOOK_SECRET)`,
        );
      let event: BillingEvent;
      try {
        event = await provider.verifyWebhook(rawBody, signature, clock.now());
      } catch (err) {
        if (err instanceof InvalidWebhookError) throw badRequest(err.message);
        throw err;
      }
      return inTransaction(db, async (trx) => {
        const fresh = await store.recordEvent(trx, {
          provider: provider.name,
          event_id: event.id,
          type: event.providerType,
          received_at: clock.now().toISOString(),
        });
        if (!fresh) return { received: true, duplicate: true, applied: false };
        let applied = false;
        if (event.kind === 'top_up_paid') applied = await applyTopUp(trx, provider, event);
        else if (event.kind === 'seat_quantity_changed')
          for (const releaseId of event.releaseIds)
            if (
              await deps.accounts.seatReleases.confirm(trx, releaseId, { provider: provider.name, eventId: event.id })
            )
              applied = true;
        return { received: true, duplicate: false, applied };
      });
    },
  };
}
