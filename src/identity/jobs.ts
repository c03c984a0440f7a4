import type { Kernel } from '../kernel.js';
import type { JobSpec } from '../jobs/scheduler.js';
import { purgeExpiredSecrets } from './store.js';

/** Housekeeping: drop refresh tokens, one-time secrets and the pages' browser sessions well past their expiry. */
export function identityJobs(kernel: Pick<Kernel, 'db'>): JobSpec[] {
  const { db } = kernel;
  return [
    {
      name: 'identity.purge-expired-secrets',
      pattern: '41 * * * *',
      scope: 'cluster',
      async run(now) {
        const cutoff = new Date(now.getTime() - 24 * 3_600_000).toISOString();
        await purgeExpiredSecrets(db, cutoff);
      },
    },
  ];
}
