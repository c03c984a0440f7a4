import type { Kernel } from '../kernel.js';
import type { JobSpec } from '../jobs/scheduler.js';
import * as store from './store.js';

/** Housekeeping: codes, refresh tokens, revoked-jti rows and page sessions past their expiry. */
export function oauthJobs(kernel: Pick<Kernel, 'db'>): JobSpec[] {
  const { db } = kernel;
  return [
    {
      name: 'oauth.purge-expired',
      pattern: '23 * * * *',
      async run(now) {
        const cutoff = new Date(now.getTime() - 24 * 3_600_000).toISOString();
        await store.deleteExpiredCodes(db, cutoff);
        await store.deleteExpiredRefreshTokens(db, cutoff);
        await store.deleteExpiredRevokedJtis(db, now.toISOString());
        await store.deleteExpiredBrowserSessions(db, cutoff);
      },
    },
  ];
}
