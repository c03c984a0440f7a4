import type { AppContext } from '../app.js';
import type { JobSpec } from '../jobs/scheduler.js';

/** Housekeeping: drop refresh tokens and one-time secrets well past their expiry. */
export function identityJobs(app: AppContext): JobSpec[] {
  const { db } = app.kernel;
  return [
    {
      name: 'identity.purge-expired-secrets',
      pattern: '41 * * * *',
      async run(now) {
        const cutoff = new Date(now.getTime() - 24 * 3_600_000).toISOString();
        await db.deleteFrom('auth_refresh_tokens').where('expires_at', '<', cutoff).execute();
        await db.deleteFrom('one_time_tokens').where('expires_at', '<', cutoff).execute();
      },
    },
  ];
}
