import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import type { GantryRouteConfig } from '../http/route-config.js';
import { reply } from '../http/envelope.js';
import { bearerToken, principalOf } from '../http/auth.js';
import { countOpenStream, SSE_HEADERS } from '../http/sse.js';
import type { ListQuery, NotificationsService } from './service.js';
import type { NotificationStreams } from './live.js';
import { idParams, listQuery, responses } from './schemas.js';

/** The unread-count route's data when the count is cached, else undefined. */
export function cachedUnreadCount(notifications: NotificationsService, userId: string): { count: number } | undefined {
  const count = notifications.cachedUnreadCount(userId);
  return count === undefined ? undefined : { count };
}

const perMinute = (limit: number, answers: GantryRouteConfig['responses']): GantryRouteConfig => ({
  rateLimit: { limit, windowSec: 60 },
  responses: answers,
});
// A notification of another user is a 403, an unknown one a 404 (docs/interface.md, Errors).
const OWNED_ERRORS: GantryRouteConfig['errors'] = ['FORBIDDEN', 'NOT_FOUND'];

/** docs/notifications.md: identity-scoped through the JWT only; no account or workspace. */
export function notificationsRoutes(app: PluginDeps, streams: NotificationStreams): ServerRoute[] {
  const { notifications, identity } = app.services;

  return [
    {
      method: 'GET',
      path: '/notifications',
      options: {
        id: 'notifications.list',
        plugins: { gantry: perMinute(60, responses.list) },
        validate: { query: listQuery },
      },
      handler: async (request, h) => {
        const page = await notifications.list(principalOf(request).userId, request.query as ListQuery);
        return reply(request, h, page.items, { meta: page.meta });
      },
    },
    {
      method: 'GET',
      path: '/notifications/unread-count',
      options: { id: 'notifications.unread-count', plugins: { gantry: perMinute(60, responses.unreadCount) } },
      // Polled by every open client: a cached count is answered without a promise, and in
      // front of hapi once the caller is known (src/notifications/plugin.ts).
      handler: (request, h) => {
        const { userId } = principalOf(request);
        const cached = cachedUnreadCount(notifications, userId);
        if (cached !== undefined) return reply(request, h, cached);
        return notifications.unreadCount(userId).then((count) => reply(request, h, { count }));
      },
    },
    {
      method: 'PATCH',
      path: '/notifications/{id}/read',
      options: {
        id: 'notifications.read',
        plugins: { gantry: { ...perMinute(30, responses.read), errors: OWNED_ERRORS } },
        validate: { params: idParams },
      },
      handler: async (request, h) =>
        reply(request, h, await notifications.markRead(principalOf(request).userId, String(request.params.id))),
    },
    {
      method: 'PATCH',
      path: '/notifications/{id}/archive',
      options: {
        id: 'notifications.archive',
        plugins: { gantry: { ...perMinute(30, responses.archived), errors: OWNED_ERRORS } },
        validate: { params: idParams },
      },
      handler: async (request, h) =>
        reply(request, h, await notifications.archive(principalOf(request).userId, String(request.params.id))),
    },
    {
      method: 'POST',
      path: '/notifications/mark-all-read',
      options: { id: 'notifications.mark-all-read', plugins: { gantry: perMinute(10, responses.allRead) } },
      handler: async (request, h) => {
        const { status } = await notifications.markAllRead(principalOf(request).userId);
        return reply(request, h, { status });
      },
    },
    {
      method: 'GET',
      path: '/notifications/stream',
      // Server-Sent Events, not the envelope; errors before the stream opens still are.
      options: { id: 'notifications.stream', plugins: { gantry: { responses: responses.stream } } },
      handler: async (request, h) => {
        const { userId } = principalOf(request);
        // The kernel's bearer strategy has already read this header, so it holds a token.
        const token = bearerToken(request.headers.authorization as string | undefined) ?? '';
        // The client may leave while the stream is being set up: end it then too.
        let gone = false;
        let opened: { destroy(): void } | null = null;
        request.raw.res.once('close', () => {
          gone = true;
          opened?.destroy();
        });
        const lastEventId =
          request.headers['last-event-id'] ?? (request.query as { lastEventId?: string }).lastEventId ?? null;
        const stream = await streams.open({
          userId,
          lastEventId: typeof lastEventId === 'string' ? lastEventId : null,
          // Re-checked at every heartbeat: an expired or revoked session ends its stream.
          stillValid: async () => !!(await identity.sessionVerifier.verify(token)),
        });
        opened = stream;
        if (gone) stream.destroy();
        countOpenStream(app.kernel.metrics, 'notifications', request.raw.res);
        const response = h.response(stream).type('text/event-stream; charset=utf-8');
        for (const [name, value] of Object.entries(SSE_HEADERS)) response.header(name, value);
        return response;
      },
    },
  ];
}
