import type { Kernel } from '../kernel.js';

/** The reader of the audit log: newest first, keyset-paged on seq (index account_id, seq). */
export async function readAuditLog(kernel: Pick<Kernel, 'db' | 'cursors'>, accountId: string, page: { limit: number; cursor?: string }) {
  const { db, cursors } = kernel;
  const scope = `audit:${accountId}`;
  const after = page.cursor ? Number(cursors.decode<{ seq: number }>(scope, page.cursor).seq) : null;
  let q = db
    .selectFrom('account_audit_log')
    .select(['seq', 'id', 'action', 'actor_id', 'actor_username', 'target_id', 'metadata', 'created_at'])
    .where('account_id', '=', accountId);
  if (after !== null && Number.isFinite(after)) q = q.where('seq', '<', after);
  const [rows, count] = await Promise.all([
    q.orderBy('seq', 'desc').limit(page.limit + 1).execute(),
    db.selectFrom('account_audit_counts').select('total').where('account_id', '=', accountId).executeTakeFirst(),
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

