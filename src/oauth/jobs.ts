import type { Kernel } from '../kernel.js';
import type { JobSpec } from '../jobs/scheduler.js';
import type { OAuthClients } from './clients.js';
import * as store from './store/index.js';

/**
 * Housekeeping: codes, refresh tokens and revoked-jti rows past their expiry;
 * self-registered clients that never reached a grant.
 */
export function oauthJobs(
  clients: Pick<OAuthClients, 'purgeUnused'>,
  kernel: Pick<Kernel, 'db' | 'logger'>,
): JobSpec[] {
  const { db } = kernel;
  return [
    {
      name: 'oauth.purge-expired',
      pattern: '23 * * * *',
      scope: 'cluster',
      async run(now) {
        const cutoff = new Date(now.getTime() - 24 * 3_600_000).toISOString();
        await store.deleteExpiredCodes(db, cutoff);
        await store.deleteExpiredRefreshTokens(db, cutoff);
        await store.deleteExpiredRevokedJtis(db, now.toISOString());
      },
    },
    {
      name: 'oauth.purge-unused-clients',
      pattern: '41 * * * *',
      scope: 'cluster',
      async run(now) {
        const removed = await clients.purgeUnused(now);
        if (removed > 0) kernel.logger.info('unused self-registered oauth clients removed', { removed });
        return removed;
      },
    },
  ];
}
