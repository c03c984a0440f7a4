import { sql } from 'kysely';
import type { Executor } from '../tx.js';

/** A fixed window as the database holds it: hits so far and when it ends. */
export interface StoredWindow {
  count: number;
  resetAtMs: number;
}

/**
 * Counts one hit in one statement: a fresh window when there is none or it has ended, else one
 * more in the current one. Concurrent hits from any node serialize on the row, so the count
 * each gets back is exact (docs/postgres.md, Rate limits).
 */
export async function hitWindow(db: Executor, bucket: string, nowMs: number, windowMs: number): Promise<StoredWindow> {
  const live = sql<boolean>`rate_limit_windows.reset_at_ms > ${nowMs}`;
  const row = await db
    .insertInto('rate_limit_windows')
    .values({ bucket, count: 1, reset_at_ms: nowMs + windowMs })
    .onConflict((oc) =>
      oc.column('bucket').doUpdateSet({
        count: sql<number>`case when ${live} then rate_limit_windows.count + 1 else 1 end`,
        reset_at_ms: sql<number>`case when ${live} then rate_limit_windows.reset_at_ms else excluded.reset_at_ms end`,
      }),
    )
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

/** Drops ended windows; returns how many. */
export async function deleteEndedWindows(db: Executor, nowMs: number): Promise<number> {
  const result = await db.deleteFrom('rate_limit_windows').where('reset_at_ms', '<=', nowMs).executeTakeFirst();
  return Number(result.numDeletedRows);
}
