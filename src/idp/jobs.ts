import type { JobSpec } from '../jobs/scheduler.js';
import type { IdpService } from './service.js';

/** Housekeeping: spent ID-JAG jtis, once the assertions they belong to have expired. */
export function idpJobs(idp: Pick<IdpService, 'purgeUsedAssertions'>): JobSpec[] {
  return [
    {
      name: 'idp.purge-used-assertions',
      pattern: '*/10 * * * *',
      scope: 'cluster',
      async run(now) {
        await idp.purgeUsedAssertions(now);
      },
    },
  ];
}
