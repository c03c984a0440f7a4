import type { AccountsService } from './service.js';
import type { JobSpec } from '../jobs/scheduler.js';

/** Hourly: hard-deletes accounts whose retention period ended (or whose deletion was approved). */
export function accountsJobs(accounts: Pick<AccountsService, 'deletion'>): JobSpec[] {
  return [
    {
      name: 'accounts.purge-deleted',
      pattern: '23 * * * *',
      scope: 'cluster',
      run: (now) => accounts.deletion.purgeDue(now),
    },
  ];
}
