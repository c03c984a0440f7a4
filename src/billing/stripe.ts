import Stripe from 'stripe';
import type { BillingConfig } from '../config-billing.js';
import type { Logger } from '../lib/logger.js';
import {
  InvalidWebhookError,
  ProviderCallError,
  type BillingEvent,
  type BillingProvider,
  type SeatChangeAnswer,
  type SeatChangeInput,
  type TopUpCheckout,
  type TopUpCheckoutInput,
} from './provider.js';

/** Metadata key on the seat subscription item naming the release that last lowered it. */
const SEAT_RELEASE_KEY = 'gantry_seat_release';
/** Metadata key on a checkout session naming our checkout. */
const CHECKOUT_KEY = 'gantry_checkout';
const PAID_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

/** The SDK's host, port and protocol options from GANTRY_STRIPE_API_URL (docs/billing.md, Testing). */
function apiAddress(apiUrl: string): { host: string; port: number; protocol: 'http' | 'https' } {
  const url = new URL(apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443, protocol };
}

/**
 * What a failed Stripe call is reported as. Only the error's type, code and request id are
 * logged: Stripe's messages can quote request parameters, and nothing here may carry the key.
 */
function failureOf(err: unknown): { reason: string; log: Record<string, unknown> } {
  if (err instanceof Stripe.errors.StripeError) {
    const refused = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500;
    return {
      reason: refused ? 'billing_provider_refused' : 'billing_provider_error',
      log: { type: err.type, code: err.code ?? null, status: err.statusCode ?? null, requestId: err.requestId ?? null },
    };
  }
  return { reason: 'billing_provider_error', log: { type: (err as Error)?.name ?? 'unknown' } };
}

/** Stripe through its official SDK: Checkout in payment mode, subscription item quantities, signed webhooks. */
export function createStripeProvider(
  stripeConfig: NonNullable<BillingConfig['stripe']>,
  toleranceSec: number,
  logger: Logger,
): BillingProvider {
  const client = new Stripe(stripeConfig.secretKey, {
    ...apiAddress(stripeConfig.apiUrl),
    // The SDK retries connection failures and 409/5xx answers with the same Idempotency-Key.
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
  });

  // Stripe sets a quantity, it cannot subtract one: two releases on one item at once would both
  // read N and both write N-1. Releases of one item run one after another on this node.
  const seatItemQueues = new Map<string, Promise<unknown>>();
  function oneAtATime<T>(seatItemId: string, work: () => Promise<T>): Promise<T> {
    const previous = seatItemQueues.get(seatItemId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    seatItemQueues.set(seatItemId, tail);
    void tail.then(() => {
      if (seatItemQueues.get(seatItemId) === tail) seatItemQueues.delete(seatItemId);
    });
    return next;
  }

  /**
   * One release, run in the seat item's queue. The quantity is read fresh from Stripe and the
   * billed members are counted after it, both after every earlier release of the item, so a
   * seat is given back only while the quantity is above the members still billed: a removed
   * member outside the paid quantity gives nothing back (docs/billing.md, Seat releases).
   */
  async function lowerSeatQuantityNow({
    seatItemId,
    releaseId,
    billedMembers,
  }: SeatChangeInput): Promise<SeatChangeAnswer> {
    const failed = (err: unknown): SeatChangeAnswer => {
      const failure = failureOf(err);
      logger.warn('stripe seat release failed', { releaseId, seatItemId, ...failure.log });
      return { accepted: false, reason: failure.reason };
    };
    let item: Stripe.SubscriptionItem;
    try {
      item = await client.subscriptionItems.retrieve(seatItemId);
    } catch (err) {
      return failed(err);
    }
    // Already lowered by this release (an earlier attempt whose answer was lost).
    if (item.metadata?.[SEAT_RELEASE_KEY] === releaseId) return { accepted: true };
    const quantity = item.quantity ?? 0;
    if (quantity <= (await billedMembers())) return { accepted: false, reason: 'seat_minimum_reached' };
    try {
      await client.subscriptionItems.update(
        seatItemId,
        { quantity: quantity - 1, metadata: { [SEAT_RELEASE_KEY]: releaseId } },
        { idempotencyKey: `gantry-seat-release-${releaseId}` },
      );
      return { accepted: true };
    } catch (err) {
      return failed(err);
    }
  }

  return {
    name: 'stripe',
    receivesWebhooks: stripeConfig.webhookSecret !== null,

    async createTopUpCheckout(input: TopUpCheckoutInput): Promise<TopUpCheckout> {
      try {
        const session = await client.checkout.sessions.create(
          {
            mode: 'payment',
            line_items: [
              {
                quantity: 1,
                price_data: {
                  currency: input.currency,
                  unit_amount: input.amount,
                  product_data: { name: 'Wallet top-up' },
                },
              },
            ],
            client_reference_id: input.userId,
            ...(input.customerId ? { customer: input.customerId } : { customer_email: input.email }),
            metadata: { [CHECKOUT_KEY]: input.checkoutId, gantry_user: input.userId },
            success_url: input.successUrl,
            cancel_url: input.cancelUrl,
          },
          { idempotencyKey: `gantry-checkout-${input.checkoutId}` },
        );
        if (!session.url) throw new Error('Stripe returned a checkout session without a URL');
        return { sessionId: session.id, checkoutUrl: session.url, expiresAt: new Date(session.expires_at * 1000) };
      } catch (err) {
        const failure = failureOf(err);
        logger.warn('stripe checkout session failed', failure.log);
        throw new ProviderCallError(failure.reason);
      }
    },

    lowerSeatQuantity(input: SeatChangeInput): Promise<SeatChangeAnswer> {
      return oneAtATime(input.seatItemId, () => lowerSeatQuantityNow(input));
    },

    verifyWebhook(rawBody: Buffer, signature: string | undefined, now: Date): BillingEvent {
      if (!stripeConfig.webhookSecret) throw new InvalidWebhookError('The Stripe webhook secret is not configured');
      if (!signature) throw new InvalidWebhookError('Missing Stripe-Signature header');
      let event: Stripe.Event;
      try {
        event = client.webhooks.constructEvent(
          rawBody,
          signature,
          stripeConfig.webhookSecret,
          toleranceSec,
          undefined,
          now.getTime(),
        );
      } catch (err) {
        throw new InvalidWebhookError(
          err instanceof Stripe.errors.StripeSignatureVerificationError
            ? `Invalid Stripe signature: ${err.message}`
            : 'The webhook body is not a Stripe event',
        );
      }
      // Signed, yet not shaped like an event: refused like a bad body, never a 500.
      if (
        typeof event?.id !== 'string' ||
        typeof event.type !== 'string' ||
        !event.data?.object ||
        typeof event.data.object !== 'object'
      )
        throw new InvalidWebhookError('The webhook body is not a Stripe event');
      return toBillingEvent(event);
    },
  };
}

function toBillingEvent(event: Stripe.Event): BillingEvent {
  if (PAID_EVENTS.has(event.type)) {
    const session = event.data.object as Stripe.Checkout.Session;
    if (session.payment_status === 'paid' && session.amount_total !== null && session.currency)
      return {
        id: event.id,
        kind: 'top_up_paid',
        providerType: event.type,
        sessionId: session.id,
        amount: session.amount_total,
        currency: session.currency,
      };
  }
  if (event.type === 'customer.subscription.updated') {
    const subscription = event.data.object as Stripe.Subscription;
    const releaseIds = (subscription.items?.data ?? [])
      .map((item) => item.metadata?.[SEAT_RELEASE_KEY])
      .filter((id): id is string => typeof id === 'string' && id !== '');
    if (releaseIds.length > 0)
      return { id: event.id, kind: 'seat_quantity_changed', providerType: event.type, releaseIds };
  }
  return { id: event.id, kind: 'other', providerType: event.type };
}
