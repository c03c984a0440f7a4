import { badRequest, forbidden, notFound } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import { offsetMeta } from '../http/pagination.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import * as store from './store.js';
import { presentNotification } from './presenters.js';
import { NotificationCounts } from './counts.js';

export const NOTIFICATION_PRIORITIES = ['low', 'normal', 'high'] as const;
export type NotificationPriority = (typeof NOTIFICATION_PRIORITIES)[number];
export const NOTIFICATION_STATUSES = ['unread', 'read', 'archived'] as const;
type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** Topic on the change feed when a user's notifications change; key = user id. */
export const NOTIFICATIONS_TOPIC = 'notifications.changed';

/** Categories are short machine names (system, productivity, ai_run_completed...). */
export const CATEGORY_PATTERN = /^[a-z][a-z0-9_.-]{0,49}$/;
const TITLE_MAX = 200;
const BODY_MAX = 4000;
export const LIST_MAX_LIMIT = 50;
/** docs/interface.md, Pagination: offset lists default to 20, cursor lists to 25. */
const OFFSET_DEFAULT_LIMIT = 20;
const CURSOR_DEFAULT_LIMIT = 25;

export interface NewNotification {
  userId: string;
  title: string;
  body: string;
  category?: string;
  priority?: NotificationPriority;
  icon?: string | null;
  actionUrl?: string | null;
  expiresAt?: Date | null;
}

export interface ListQuery {
  limit?: number;
  offset?: number;
  cursor?: string;
  /** Cursor-style meta on a first page that has no cursor yet. */
  paging?: 'offset' | 'cursor';
  status?: NotificationStatus;
  category?: string;
}

function validActionUrl(value: string): boolean {
  if (value.length > 2048) return false;
  if (value.startsWith('/') && !value.startsWith('//')) return true; // a path inside the web app
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** The rules every creator obeys, whoever calls (a domain, the CLI). */
function checkInput(input: Omit<NewNotification, 'userId'>): void {
  const problems: Array<{ field: string; message: string }> = [];
  if (!input.title?.trim() || input.title.length > TITLE_MAX)
    problems.push({ field: 'title', message: `title must be 1-${TITLE_MAX} characters` });
  if (!input.body?.trim() || input.body.length > BODY_MAX)
    problems.push({ field: 'body', message: `body must be 1-${BODY_MAX} characters` });
  if (input.category !== undefined && !CATEGORY_PATTERN.test(input.category))
    problems.push({
      field: 'category',
      message: 'category must be a lower-case name (a-z, 0-9, _ . -), up to 50 characters',
    });
  if (input.priority !== undefined && !NOTIFICATION_PRIORITIES.includes(input.priority))
    problems.push({ field: 'priority', message: `priority must be one of ${NOTIFICATION_PRIORITIES.join(', ')}` });
  if (input.icon && input.icon.length > 100)
    problems.push({ field: 'icon', message: 'icon must be at most 100 characters' });
  if (input.actionUrl && !validActionUrl(input.actionUrl))
    problems.push({ field: 'actionUrl', message: 'actionUrl must be an http(s) URL or a path starting with /' });
  if (input.expiresAt && Number.isNaN(input.expiresAt.getTime()))
    problems.push({ field: 'expiresAt', message: 'expiresAt must be a valid time' });
  if (problems.length > 0)
    throw badRequest(`Invalid notification: ${problems.map((p) => p.message).join('; ')}`, problems);
}

/**
 * In-app notifications. `notify` is the one way any domain (invitations, connector failures,
 * finished runs, the CLI) creates one; call it inside the transaction of the event it reports.
 * Every change to a user's notifications publishes NOTIFICATIONS_TOPIC (key = user id) in the
 * same transaction, which is what live streams in every process listen to.
 */
export function createNotificationsService(kernel: Kernel, deps: { identity: Pick<IdentityService, 'userExists'> }) {
  const { db, clock, changes, cursors } = kernel;
  const nowIso = () => clock.now().toISOString();
  const counts = new NotificationCounts(clock);
  changes.subscribe(NOTIFICATIONS_TOPIC, (userId) => counts.invalidate(userId));

  /** Visible rows under a filter; cached unless a category narrows it (unbounded key space). */
  function countOf(filter: store.ListFilter): Promise<number> {
    if (filter.category) return store.countVisible(db, filter).then((c) => c.count);
    return counts.get(filter.userId, filter.status ?? 'live', () => store.countVisible(db, filter));
  }

  async function insertOne(executor: Executor, input: NewNotification): Promise<string> {
    if (!(await deps.identity.userExists(input.userId, executor))) throw notFound('User');
    const id = newId();
    await store.lockUserSeq(executor, input.userId);
    await store.insertNotification(executor, {
      id,
      user_id: input.userId,
      title: input.title,
      body: input.body,
      icon: input.icon ?? null,
      action_url: input.actionUrl ?? null,
      category: input.category ?? 'system',
      priority: input.priority ?? 'normal',
      status: 'unread',
      read_at: null,
      archived_at: null,
      expires_at: input.expiresAt ? input.expiresAt.toISOString() : null,
      created_at: nowIso(),
    });
    await changes.publish(executor, NOTIFICATIONS_TOPIC, input.userId);
    return id;
  }

  async function notify(executor: Executor, input: NewNotification): Promise<string> {
    checkInput(input);
    return insertOne(executor, input);
  }

  /** The caller's own notification, else 404 (unknown or expired) or 403 (someone else's). */
  async function owned(executor: Executor, userId: string, id: string) {
    const row = await store.findById(executor, id);
    if (!row) throw notFound('Notification');
    if (row.user_id !== userId) throw forbidden('This notification belongs to another user');
    if (row.expires_at !== null && row.expires_at <= nowIso()) throw notFound('Notification');
    return row;
  }

  const cursorScope = (userId: string, query: ListQuery) =>
    `notifications:${userId}:${query.status ?? ''}:${query.category ?? ''}`;

  return {
    notify,
    /** notify() in a transaction of its own. */
    notifyNow: (input: NewNotification) => inTransaction(db, (trx) => notify(trx, input)),

    /** The same notification to several users, all or none (gantry notify --account). */
    async notifyUsers(
      userIds: readonly string[],
      input: Omit<NewNotification, 'userId'>,
    ): Promise<Array<{ userId: string; id: string }>> {
      checkInput(input);
      return inTransaction(db, async (trx) => {
        const created: Array<{ userId: string; id: string }> = [];
        for (const userId of userIds) created.push({ userId, id: await insertOne(trx, { ...input, userId }) });
        return created;
      });
    },

    /**
     * Newest first, in offset style (total, limit, offset, hasNextPage, and the nextCursor that
     * continues from this page) or cursor style (keyset on seq: later inserts never shift a page).
     */
    async list(userId: string, query: ListQuery) {
      if (query.cursor !== undefined && query.offset !== undefined) {
        throw badRequest('Use either offset or cursor, not both', [
          { field: 'cursor', message: 'cursor cannot be combined with offset' },
        ]);
      }
      const scope = cursorScope(userId, query);
      const filter = { userId, status: query.status, category: query.category, now: nowIso() };
      if (query.cursor !== undefined || query.paging === 'cursor') {
        const limit = query.limit ?? CURSOR_DEFAULT_LIMIT;
        let beforeSeq: number | undefined;
        if (query.cursor !== undefined) {
          const position = cursors.decode<{ s?: unknown }>(scope, query.cursor);
          if (typeof position.s !== 'number' || !Number.isSafeInteger(position.s) || position.s < 1)
            throw badRequest('The cursor is invalid', [{ field: 'cursor', message: 'invalid cursor' }]);
          beforeSeq = position.s;
        }
        const rows = await store.listPage(db, filter, { limit: limit + 1, beforeSeq });
        const page = cursors.page(scope, rows, limit, (row) => ({ s: row.seq }));
        return {
          items: page.items.map(presentNotification),
          meta: { limit, hasNextPage: page.hasNextPage, nextCursor: page.nextCursor },
        };
      }
      const limit = query.limit ?? OFFSET_DEFAULT_LIMIT;
      const offset = query.offset ?? 0;
      const [rows, total] = [await store.listPage(db, filter, { limit: limit + 1, offset }), await countOf(filter)];
      const page = cursors.page(scope, rows, limit, (row) => ({ s: row.seq }));
      return {
        items: page.items.map(presentNotification),
        meta: { ...offsetMeta(total, limit, offset), nextCursor: page.nextCursor },
      };
    },

    unreadCount: (userId: string) =>
      counts.get(userId, 'unread', () => store.countVisible(db, { userId, status: 'unread', now: nowIso() })),

    /** The unread count when cached and valid (no change and no expiry since it was counted). */
    cachedUnreadCount: (userId: string) => counts.peek(userId, 'unread'),

    /** unread -> read with readAt = now; a read one keeps its first readAt (docs/interface.md, States: no-op). */
    async markRead(userId: string, id: string): Promise<{ status: 'read' }> {
      await inTransaction(db, async (trx) => {
        const row = await owned(trx, userId, id);
        const at = nowIso();
        if (row.status === 'unread') {
          if (await store.markRead(trx, id, at)) await changes.publish(trx, NOTIFICATIONS_TOPIC, userId);
        } else if (row.status === 'archived') {
          // Opening an archived notification records that it was seen; it stays archived.
          await store.setReadAtOnce(trx, id, at);
        }
      });
      return { status: 'read' };
    },

    /** Any -> archived; archiving an archived one changes nothing (archivedAt kept). */
    async archive(userId: string, id: string): Promise<{ status: 'archived' }> {
      await inTransaction(db, async (trx) => {
        const row = await owned(trx, userId, id);
        if (row.status !== 'archived' && (await store.archive(trx, id, nowIso())))
          await changes.publish(trx, NOTIFICATIONS_TOPIC, userId);
      });
      return { status: 'archived' };
    },

    /** Every unread -> read; read and archived ones are not touched. */
    async markAllRead(userId: string): Promise<{ status: 'all_read'; updated: number }> {
      const updated = await inTransaction(db, async (trx) => {
        const n = await store.markAllRead(trx, userId, nowIso());
        if (n > 0) await changes.publish(trx, NOTIFICATIONS_TOPIC, userId);
        return n;
      });
      return { status: 'all_read', updated };
    },

    /** For live streams: where a fresh stream starts, and what came after a position. */
    latestSeq: (userId: string) => store.latestSeq(db, userId),
    async listAfter(userId: string, afterSeq: number, limit: number) {
      const rows = await store.listAfter(db, userId, afterSeq, nowIso(), limit);
      return rows.map((row) => ({ seq: row.seq, notification: presentNotification(row) }));
    },

    /** Retention: removes archived and expired notifications older than the retention period. */
    async purge(now: Date): Promise<number> {
      const cutoff = new Date(now.getTime() - kernel.config.notificationRetentionDays * 86_400_000).toISOString();
      return inTransaction(db, async (trx) => {
        const purged = await store.purge(trx, cutoff);
        // Archived totals moved for some users: every process drops its cached counts.
        if (purged > 0) await changes.publish(trx, NOTIFICATIONS_TOPIC, null);
        return purged;
      });
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
