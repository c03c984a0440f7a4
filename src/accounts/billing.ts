/** What a member removal asks the billing provider: one seat fewer on the account's plan. */
interface SeatReleaseRequest {
  /** Our id for the release; the provider's confirming webhook refers to it. */
  releaseId: string;
  accountId: string;
  userId: string;
  /**
   * The account's billed members (those holding a seat: active or invited) counted when
   * called. The provider calls it after reading the quantity, inside its one-at-a-time queue
   * for the seat item, and lowers nothing unless the quantity is above it: a seat is given
   * back only when the removed member was within the paid quantity (docs/billing.md, Seat releases).
   */
  billedMembers(): Promise<number>;
}

/**
 * The billing provider, as seen from accounts. `releaseSeat` asks for a lower seat quantity
 * and answers whether the provider accepted the request; the change itself is confirmed
 * later by the webhook. It is called after the removal commits, never inside a transaction,
 * and never lowers the quantity below `billedMembers()` (answering `seat_minimum_reached`).
 */
export interface BillingAdapter {
  name: string;
  releaseSeat(request: SeatReleaseRequest): Promise<{ accepted: true } | { accepted: false; reason: string }>;
}

/** seatRelease.status values besides not_requested and requested (docs/interface.md, Resources). */
export const SEAT_RELEASE = {
  notRequested: 'not_requested',
  requested: 'requested',
  confirmed: 'confirmed',
  pending: 'pending',
  notConfigured: 'billing_not_configured',
  providerError: 'billing_provider_error',
} as const;
