import { type OnConflictBuilder, sql } from 'kysely';
import type { DB } from '../schema.js';
import type { Executor } from '../tx.js';

/** A fixed window as the database holds it: hits so far and when it ends. */
export interface StoredWindow {
  count: number;
  resetAtMs: number;
}

/**
 * The conflict clause that counts the inserted row's hits (one, or a batch's several) on the
 * bucket: a fresh window when the bucket's has ended, else more in the current one. Also used
 * by a domain store's statement that charges a limit together with its own work
 * (docs/postgres.md, Transactions).
 */
export const countHitOnConflict = (nowMs: number) => (oc: OnConflictBuilder<DB, 'rate_limit_windows'>) => {
  const live = sql<boolean>`rate_limit_windows.reset_at_ms > ${nowMs}`;
  return oc.column('bucket').doUpdateSet({
    count: sql<number>`case when ${live} then rate_limit_windows.count + excluded.count else excluded.count end`,
    reset_at_ms: sql<number>`case when ${live} then rate_limit_windows.reset_at_ms else excluded.reset_at_ms end`,
  });
};

/**
 * Counts one hit in one statement. Concurrent hits from any node serialize on the row, so the
 * count each gets back is exact (docs/postgres.md, Rate limits).
 */
export async function hitWindow(db: Executor, bucket: string, nowMs: number, windowMs: number): Promise<StoredWindow> {
  const row = await db
    .insertInto('rate_limit_windows')
    .values({ bucket, count: 1, reset_at_ms: nowMs + windowMs })
    .onConflict(countHitOnConflict(nowMs))
    .returning(['count', 'reset_at_ms'])
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), resetAtMs: Number(row.reset_at_ms) };
}

/** The bucket's window without counting; null when it has none or it has ended. */
export async function readWindow(db: Executor, bucket: string, nowMs: number): Promise<StoredWindow | null> {
  const row = await db
    .selectFrom('rate_limit_windows')
    .select(['count', 'reset_at_ms'])
    .where('bucket', '=', bucket)
    .where('reset_at_ms', '>', nowMs)
    .executeTakeFirst();
  return row ? { count: Number(row.count), resetAtMs: Number(row.reset_at_ms) } : null;
}

/** The live windows of several buckets in one query, by bucket; a bucket without one is absent. */
export async function readWindows(db: Executor, buckets: string[], nowMs: number): Promise<Map<string, StoredWindow>> {
  const rows = await db
    .selectFrom('rate_limit_windows')
    .select(['bucket', 'count', 'reset_at_ms'])
    .where('bucket', 'in', buckets)
    .where('reset_at_ms', '>', nowMs)
    .execute();
  return new Map(rows.map((row) => [row.bucket, { count: Number(row.count), resetAtMs: Number(row.reset_at_ms) }]));
}

/** Drops ended windows; returns how many. */
export async function deleteEndedWindows(db: Executor, nowMs: number): Promise<number> {
  const result = await db.deleteFrom('rate_limit_windows').where('reset_at_ms', '<=', nowMs).executeTakeFirst();
  return Number(result.numDeletedRows);
}
