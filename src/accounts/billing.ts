import { badRequest } from '../http/errors.js';
import { hmacSha256, safeEqual } from '../lib/crypto.js';

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

/** Header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export const SIGNATURE_HEADER = 'x-billing-signature';
/** A signed request older (or newer) than this is a replay: refused. */
const REPLAY_WINDOW_SEC = 300;

function signBillingPayload(secret: string, timestamp: number, body: string | Buffer): string {
  return hmacSha256(
    secret,
    Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.isBuffer(body) ? body : Buffer.from(body)]),
  ).toString('hex');
}

export function billingSignatureHeader(secret: string, timestamp: number, body: string | Buffer): string {
  return `t=${timestamp},v1=${signBillingPayload(secret, timestamp, body)}`;
}

/** Checks the signature and the replay window; throws 400 on any failure (nothing is changed). */
export function verifyBillingSignature(secret: string, header: string | undefined, body: Buffer, now: Date): void {
  if (!header) throw badRequest('Missing billing signature header');
  const parts = new Map<string, string>();
  for (const piece of header.split(',')) {
    const at = piece.indexOf('=');
    if (at > 0) parts.set(piece.slice(0, at).trim(), piece.slice(at + 1).trim());
  }
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (!t || !/^\d{1,12}$/.test(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1))
    throw badRequest('Malformed billing signature header');
  const timestamp = Number(t);
  if (Math.abs(now.getTime() / 1000 - timestamp) > REPLAY_WINDOW_SEC)
    throw badRequest('The billing signature timestamp is outside the replay window');
  if (!safeEqual(v1, signBillingPayload(secret, timestamp, body))) throw badRequest('Invalid billing signature');
}
