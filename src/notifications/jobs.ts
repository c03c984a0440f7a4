import type { Kernel } from '../kernel.js';
import type { NotificationsService } from './service.js';
import type { JobSpec } from '../jobs/scheduler.js';

/** Retention: archived and expired notifications go once config.notificationRetentionDays have passed. */
export function notificationsJobs(
  notifications: Pick<NotificationsService, 'purge'>,
  kernel: Pick<Kernel, 'logger'>,
): JobSpec[] {
  return [
    {
      name: 'notifications.purge',
      pattern: '23 3 * * *',
      scope: 'cluster',
      async run(now) {
        const purged = await notifications.purge(now);
        if (purged > 0) kernel.logger.info('notifications purged', { purged });
        return purged;
      },
    },
  ];
}
