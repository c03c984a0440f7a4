import type { AppContext } from '../app.js';
import type { JobSpec } from '../jobs/scheduler.js';

/** Retention: archived and expired notifications go once config.notificationRetentionDays have passed. */
export function notificationsJobs(app: AppContext): JobSpec[] {
  const { notifications } = app.services;
  return [
    {
      name: 'notifications.purge',
      pattern: '23 3 * * *',
      async run(now) {
        const purged = await notifications.purge(now);
        if (purged > 0) app.kernel.logger.info('notifications purged', { purged });
        return purged;
      },
    },
  ];
}
