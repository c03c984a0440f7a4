import type { Kernel } from '../kernel.js';
import type { Executor } from '../db/tx.js';
import * as store from './store.js';

/** The reader of the audit log: newest first, keyset-paged on seq (index account_id, seq). */
export async function readAuditLog(
  kernel: Pick<Kernel, 'db' | 'cursors'>,
  accountId: string,
  page: { limit: number; cursor?: string },
) {
  const { db, cursors } = kernel;
  const scope = `audit:${accountId}`;
  const after = page.cursor ? Number(cursors.decode<{ seq: number }>(scope, page.cursor).seq) : null;
  const [rows, count] = await Promise.all([
    store.listEntries(db, accountId, after !== null && Number.isFinite(after) ? after : null, page.limit + 1),
    store.countEntries(db, accountId),
  ]);
  const result = cursors.page(scope, rows, page.limit, (r) => ({ seq: r.seq }));
  return {
    items: result.items.map((r) => ({
      id: r.id,
      action: r.action,
      actorId: r.actor_id,
      actorUsername: r.actor_username,
      targetId: r.target_id,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
      createdAt: r.created_at,
    })),
    meta: { total: count?.total ?? 0, hasMore: result.hasNextPage, cursor: result.nextCursor },
  };
}

/**
 * Entries of some actions in an account since a moment, and the oldest one's time (for quotas);
 * with `email`, only those whose metadata names that address.
 */
export const countAuditSince = (
  executor: Executor,
  accountId: string,
  actions: readonly string[],
  sinceIso: string,
  email?: string,
) => store.countSince(executor, accountId, actions, sinceIso, email);
