/**
 * The seam between Gantry's billing rules and a payment provider (docs/billing.md, Providers).
 * Stripe is the first implementation (stripe.ts); another provider implements the same three
 * operations and the service does not change.
 */
export interface BillingProvider {
  /** Stable name: stored on links, checkouts and events, and in audit metadata. */
  readonly name: string;
  /** Whether incoming webhooks can be verified (a signing secret is configured). */
  readonly receivesWebhooks: boolean;
  /** Starts a hosted payment page for a one-off wallet top-up. */
  createTopUpCheckout(input: TopUpCheckoutInput): Promise<TopUpCheckout>;
  /**
   * Lowers the seat subscription item's quantity by one, only while it is above
   * `billedMembers()`, called after the quantity is read with the item's other releases held
   * off; else answers `seat_minimum_reached` and changes nothing. `releaseId` is the
   * idempotency key: sending the same release twice never lowers the quantity twice.
   */
  lowerSeatQuantity(input: SeatChangeInput): Promise<SeatChangeAnswer>;
  /**
   * Verifies a webhook over its raw bytes before anything is parsed, then maps it to an event
   * the service knows. Throws InvalidWebhookError when the signature, its age or the body is bad.
   */
  verifyWebhook(rawBody: Buffer, signature: string | undefined, now: Date): BillingEvent | Promise<BillingEvent>;
}

export interface TopUpCheckoutInput {
  /** Our checkout id: the provider echoes it back in the completed event. */
  checkoutId: string;
  userId: string;
  email: string;
  customerId: string | null;
  /** Minor units (cents), an integer within the configured bounds. */
  amount: number;
  /** Lower-case ISO 4217. */
  currency: string;
  successUrl: string;
  cancelUrl: string;
}

export interface TopUpCheckout {
  sessionId: string;
  checkoutUrl: string;
  expiresAt: Date;
}

export interface SeatChangeInput {
  seatItemId: string;
  releaseId: string;
  /** The account's members still billed, counted when called (docs/billing.md, Seat releases). */
  billedMembers(): Promise<number>;
}

export type SeatChangeAnswer = { accepted: true } | { accepted: false; reason: string };

/** A verified webhook, reduced to what Gantry acts on. */
export type BillingEvent =
  | {
      id: string;
      kind: 'top_up_paid';
      providerType: string;
      sessionId: string;
      amount: number;
      currency: string;
    }
  | { id: string; kind: 'seat_quantity_changed'; providerType: string; releaseIds: string[] }
  | { id: string; kind: 'other'; providerType: string };

/** A webhook that failed verification: answered 400, nothing is changed. */
export class InvalidWebhookError extends Error {}

/** A provider call that failed; `reason` is safe to answer, log and audit. */
export class ProviderCallError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}
