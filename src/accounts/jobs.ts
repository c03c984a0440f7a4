import type { AppContext } from '../app.js';
import type { JobSpec } from '../jobs/scheduler.js';

/** Hourly: hard-deletes accounts whose retention period ended (or whose deletion was approved). */
export function accountsJobs(app: AppContext): JobSpec[] {
  return [{ name: 'accounts.purge-deleted', pattern: '23 * * * *', run: (now) => app.services.accounts.deletion.purgeDue(now) }];
}
