import type { Executor } from '../db/tx.js';
import { type AccountsDeps } from './context.js';
import { SEAT_RELEASE } from './billing.js';
import * as store from './store/index.js';

/**
 * Seat releases after their request: the billing provider's webhook confirms them
 * (docs/billing.md, Seat releases), and operators and tests read them.
 */
export function createSeatReleases(deps: AccountsDeps) {
  const { db, clock } = deps.kernel;
  const audit = deps.audit.record;

  return {
    /**
     * Marks a release confirmed inside the caller's transaction (the webhook's, with its event
     * id). Any unconfirmed status may be confirmed: a release whose answer was lost
     * (billing_provider_error) can still have reached the provider. True when it changed.
     */
    async confirm(trx: Executor, releaseId: string, origin: { provider: string; eventId: string }): Promise<boolean> {
      const release = await store.findSeatRelease(trx, releaseId);
      if (!release || release.status === SEAT_RELEASE.confirmed) return false;
      await store.setSeatReleaseStatus(trx, release.id, SEAT_RELEASE.confirmed, clock.now().toISOString());
      await audit(trx, null, {
        accountId: release.account_id,
        action: 'seat.release_confirmed',
        targetId: release.user_id,
        metadata: { releaseId: release.id, provider: origin.provider, eventId: origin.eventId },
      });
      return true;
    },

    async get(releaseId: string) {
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
