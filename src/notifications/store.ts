import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from '../db/tx.js';
import { engineOf } from '../db/engine.js';
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

/**
 * "Not archived", spelled exactly as the partial index notifications_user_live_seq says it,
 * with a literal (a bound parameter would not prove the index applies): the default listing
 * walks that index newest first and stops after one page, where the status index would read
 * both statuses in full and sort them.
 */
const LIVE = sql<boolean>`status <> 'archived'`;

/**
 * PostgreSQL: holds the user's notification lock until the transaction ends, taken before the
 * insert draws its seq, so one user's seqs commit in the order they are drawn and a stream
 * reading `seq > last` on any node never passes one that commits later (docs/postgres.md,
 * Several nodes). SQLite has one writer at a time: nothing to do.
 */
export async function lockUserSeq(db: Executor, userId: string): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtext(${`notifications:${userId}`}))`.execute(db);
}

export const insertNotification = (db: Executor, row: Insertable<NotificationsTable>) =>
  db.insertInto('notifications').values(row).execute();

/** Filtered rows of one user, newest first. Expired rows never show. */
function visible(db: Executor, filter: ListFilter) {
  let query = db
    .selectFrom('notifications')
    .where('user_id', '=', filter.userId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', filter.now)]));
  if (filter.status) {
    query = query.where('status', '=', filter.status);
  } else {
    query = query.where(LIVE);
  }
  if (filter.category) query = query.where('category', '=', filter.category);
  return query;
}

/** One page, newest first: after `beforeSeq` (keyset) or from `offset`. Fetches limit rows as asked. */
export function listPage(
  db: Executor,
  filter: ListFilter,
  page: { limit: number; offset?: number; beforeSeq?: number },
) {
  let query = visible(db, filter).selectAll();
  if (page.beforeSeq !== undefined) query = query.where('seq', '<', page.beforeSeq);
  query = query.orderBy('seq', 'desc').limit(page.limit);
  if (page.offset) query = query.offset(page.offset);
  return query.execute();
}

/** A count, and the soonest expiry among the rows counted: when the count next drops by itself. */
export interface Counted {
  count: number;
  nextExpiry: string | null;
}

/**
 * How many rows a filter shows (the offset total, the unread count). Without a category it is
 * an index-only scan of (user_id, status, seq, expires_at): one or two ranges, no table rows.
 */
export async function countVisible(db: Executor, filter: ListFilter): Promise<Counted> {
  const base = filter.category
    ? visible(db, filter)
    : db
        .selectFrom('notifications')
        .where('user_id', '=', filter.userId)
        .where('status', 'in', filter.status ? [filter.status] : ['unread', 'read'])
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', filter.now)]));
  const row = await base
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<string | null>('expires_at').as('next')])
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), nextExpiry: row.next ?? null };
}

export const findById = (db: Executor, id: string) =>
  db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();

/** unread -> read; returns whether a row moved (a read or archived one is left alone). */
export async function markRead(db: Executor, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('notifications')
    .set({ status: 'read', read_at: at })
    .where('id', '=', id)
    .where('status', '=', 'unread')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Any -> archived, once: archived_at keeps the first archiving time. */
export async function archive(db: Executor, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('notifications')
    .set({ status: 'archived', archived_at: at })
    .where('id', '=', id)
    .where('status', '!=', 'archived')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Every unread notification of the user -> read (read and archived ones untouched). */
export async function markAllRead(db: Executor, userId: string, at: string): Promise<number> {
  const result = await db
    .updateTable('notifications')
    .set({ status: 'read', read_at: at })
    .where('user_id', '=', userId)
    .where('status', '=', 'unread')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The newest seq of a user's live notifications (0 when none): where a fresh stream starts. */
export async function latestSeq(db: Executor, userId: string): Promise<number> {
  const row = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('user_id', '=', userId)
    .where(LIVE)
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Live-visible notifications created after `afterSeq`, oldest first (the stream's order). */
export function listAfter(db: Executor, userId: string, afterSeq: number, now: string, limit: number) {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('user_id', '=', userId)
    .where('seq', '>', afterSeq)
    .where(LIVE)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute();
}

/** Retention: archived ones archived before the cutoff, expired ones expired before it. */
export async function purge(db: Executor, cutoff: string): Promise<number> {
  const result = await db
    .deleteFrom('notifications')
    .where((eb) =>
      eb.or([eb.and([eb('status', '=', 'archived'), eb('archived_at', '<', cutoff)]), eb('expires_at', '<', cutoff)]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** An archived notification opened before it was ever read: readAt set once, status kept. */
export async function setReadAtOnce(db: Executor, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('notifications')
    .set({ read_at: at })
    .where('id', '=', id)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
