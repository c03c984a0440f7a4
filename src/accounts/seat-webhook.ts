import Joi from 'joi';
import { DomainError } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import { type AccountsDeps } from './context.js';
import { SEAT_RELEASE, verifyBillingSignature } from './billing.js';
import { validate } from './schemas.js';
import * as store from './store/index.js';

const eventSchema = Joi.object({
  id: Joi.string().min(1).max(200).required(),
  type: Joi.string().min(1).max(100).required(),
  data: Joi.object({ releaseId: Joi.string().guid(), reason: Joi.string().max(200) })
    .unknown(true)
    .default({}),
}).unknown(true);

interface BillingEvent {
  id: string;
  type: string;
  data: { releaseId?: string; reason?: string };
}

/**
 * The billing provider's webhook. The signature (HMAC-SHA256 over "<timestamp>.<raw body>")
 * and the replay window are checked before anything is parsed or written; a bad one is a 400
 * and nothing changes. Each event id is applied once: a replay within the window is a no-op.
 *   seat.release.confirmed {releaseId}: requested -> confirmed (seat.release_confirmed audited)
 *   seat.release.failed {releaseId, reason}: requested -> the reason
 * Other event types are acknowledged and ignored.
 */
export function createSeatWebhook(deps: AccountsDeps) {
  const { db, clock, config } = deps.kernel;
  const audit = deps.audit.record;

  return {
    async receive(rawBody: Buffer, signatureHeader: string | undefined) {
      if (!config.billingWebhookSecret)
        throw new DomainError(
          'NOT_CONFIGURED',
          'The billing webhook is not configured (GANTRY_BILLING_WEBHOOK_SECRET)',
        );
      verifyBillingSignature(config.billingWebhookSecret, signatureHeader, rawBody, clock.now());
      let parsed: unknown;
      try {
        parsed = JSON.parse(rawBody.toString('utf8'));
      } catch {
        throw new DomainError('VALIDATION_FAILED', 'The webhook body is not JSON');
      }
      const event = validate<BillingEvent>(eventSchema, parsed);
      return inTransaction(db, async (trx) => {
        const nowIso = clock.now().toISOString();
        if (!(await store.recordWebhookEvent(trx, { id: event.id, type: event.type, received_at: nowIso })))
          return { received: true, duplicate: true, applied: false };
        if ((event.type !== 'seat.release.confirmed' && event.type !== 'seat.release.failed') || !event.data.releaseId)
          return { received: true, duplicate: false, applied: false };
        const release = await store.findSeatRelease(trx, event.data.releaseId);
        if (!release) throw new DomainError('NOT_FOUND', 'Seat release not found');
        if (release.status !== SEAT_RELEASE.requested && release.status !== SEAT_RELEASE.pending)
          return { received: true, duplicate: false, applied: false, status: release.status };
        const confirmed = event.type === 'seat.release.confirmed';
        const status = confirmed ? SEAT_RELEASE.confirmed : (event.data.reason ?? 'billing_release_failed');
        await store.setSeatReleaseStatus(trx, release.id, status, confirmed ? nowIso : null);
        if (confirmed)
          await audit(trx, null, {
            accountId: release.account_id,
            action: 'seat.release_confirmed',
            targetId: release.user_id,
            metadata: { releaseId: release.id, eventId: event.id },
          });
        return { received: true, duplicate: false, applied: true, status };
      });
    },

    async release(releaseId: string) {
      const row = await store.findSeatRelease(db, releaseId);
      return row
        ? {
            id: row.id,
            accountId: row.account_id,
            chainerId: row.user_id,
            status: row.status,
            createdAt: row.created_at,
            confirmedAt: row.confirmed_at,
          }
        : null;
    },
  };
}
