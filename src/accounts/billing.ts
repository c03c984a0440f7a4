/** What a member removal asks the billing provider: one seat fewer on the account's plan. */
interface SeatReleaseRequest {
  /** Our id for the release; the provider's confirming webhook refers to it. */
  releaseId: string;
  accountId: string;
  userId: string;
}

/**
 * The billing provider, as seen from accounts. `releaseSeat` asks for a lower seat quantity
 * and answers whether the provider accepted the request; the change itself is confirmed
 * later by the webhook. It is called after the removal commits, never inside a transaction.
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
