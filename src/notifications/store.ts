import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from '../db/tx.js';
import type { NotificationsTable } from './tables.js';

export type NotificationRow = Selectable<NotificationsTable>;

/** What a listing shows: one status, or (default) everything not archived. */
export interface ListFilter {
  userId: string;
  status?: 'unread' | 'read' | 'archived';
  category?: string;
  /** ISO time: notifications with expires_at at or before it are hidden. */
  now: string;
}

export const insertNotification = (db: Executor, row: Insertable<NotificationsTable>) => db.insertInto('notifications').values(row).execute();

/** Filtered rows of one user, newest first. Expired rows never show. */
function visible(db: Executor, filter: ListFilter) {
  let query = db
    .selectFrom('notifications')
    .where('user_id', '=', filter.userId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', filter.now)]));
  if (filter.status) {
    query = query.where('status', '=', filter.status);
  } else {
    // Unary + keeps the planner on (user_id, seq): walking it newest first stops after one
    // page, where the status index would read both statuses in full and sort them.
    query = query.where(sql<string>`+status`, '!=', 'archived');
  }
  if (filter.category) query = query.where('category', '=', filter.category);
  return query;
}

/** One page, newest first: after `beforeSeq` (keyset) or from `offset`. Fetches limit rows as asked. */
export function listPage(db: Executor, filter: ListFilter, page: { limit: number; offset?: number; beforeSeq?: number }) {
  let query = visible(db, filter).selectAll();
  if (page.beforeSeq !== undefined) query = query.where('seq', '<', page.beforeSeq);
  query = query.orderBy('seq', 'desc').limit(page.limit);
  if (page.offset) query = query.offset(page.offset);
  return query.execute();
}

/** How many rows the filter shows (the offset listing's total). */
export async function countVisible(db: Executor, filter: ListFilter): Promise<number> {
  if (!filter.status && !filter.category) {
    // Two index-only range scans over (user_id, status, seq, expires_at) instead of a table walk.
    const row = await db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', filter.userId)
      .where('status', 'in', ['unread', 'read'])
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', filter.now)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
  const row = await visible(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countUnread(db: Executor, userId: string, now: string): Promise<number> {
  const row = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('status', '=', 'unread')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export const findById = (db: Executor, id: string) => db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();

/** unread -> read; returns whether a row moved (a read or archived one is left alone). */
export async function markRead(db: Executor, id: string, at: string): Promise<boolean> {
  const result = await db.updateTable('notifications').set({ status: 'read', read_at: at }).where('id', '=', id).where('status', '=', 'unread').executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Any -> archived, once: archived_at keeps the first archiving time. */
export async function archive(db: Executor, id: string, at: string): Promise<boolean> {
  const result = await db.updateTable('notifications').set({ status: 'archived', archived_at: at }).where('id', '=', id).where('status', '!=', 'archived').executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Every unread notification of the user -> read (read and archived ones untouched). */
export async function markAllRead(db: Executor, userId: string, at: string): Promise<number> {
  const result = await db.updateTable('notifications').set({ status: 'read', read_at: at }).where('user_id', '=', userId).where('status', '=', 'unread').executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The newest seq of a user's notifications (0 when none): where a fresh live stream starts. */
export async function latestSeq(db: Executor, userId: string): Promise<number> {
  const row = await db.selectFrom('notifications').select((eb) => eb.fn.max('seq').as('seq')).where('user_id', '=', userId).executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Live-visible notifications created after `afterSeq`, oldest first (the stream's order). */
export function listAfter(db: Executor, userId: string, afterSeq: number, now: string, limit: number) {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('user_id', '=', userId)
    .where('seq', '>', afterSeq)
    .where('status', '!=', 'archived')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute();
}

/** Retention: archived ones archived before the cutoff, expired ones expired before it. */
export async function purge(db: Executor, cutoff: string): Promise<number> {
  const result = await db
    .deleteFrom('notifications')
    .where((eb) => eb.or([eb.and([eb('status', '=', 'archived'), eb('archived_at', '<', cutoff)]), eb('expires_at', '<', cutoff)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}


/** An archived notification opened before it was ever read: readAt set once, status kept. */
export async function setReadAtOnce(db: Executor, id: string, at: string): Promise<boolean> {
  const result = await db.updateTable('notifications').set({ read_at: at }).where('id', '=', id).where('read_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
