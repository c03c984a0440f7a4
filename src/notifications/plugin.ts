import type { DomainPlugin } from '../services.js';
import { NotificationStreams } from './live.js';
import { servePreparedForCaller } from '../http/prepared.js';
import { cachedUnreadCount, notificationsRoutes } from './routes.js';

export const notificationsPlugin: DomainPlugin = {
  name: 'notifications',
  register(server, deps) {
    const { kernel, services } = deps;
    const streams = new NotificationStreams({
      notifications: services.notifications,
      changes: kernel.changes,
      cursors: kernel.cursors,
      logger: kernel.logger,
      heartbeatMs: kernel.config.notificationHeartbeatMs,
    });
    // Streams never end by themselves: end them before hapi waits for in-flight responses.
    server.ext('onPreStop', () => streams.closeAll());
    server.route(notificationsRoutes(deps, streams));
    // Polled by every open client (docs/notifications.md, Unread count and totals).
    servePreparedForCaller(server, '/notifications/unread-count', 'notifications.unread-count', (principal) =>
      cachedUnreadCount(services.notifications, principal.userId),
    );
  },
};
