import type { Executor } from '../db/tx.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import { newId } from '../lib/ids.js';
import type { Actor, AuditAction } from './actions.js';
import * as store from './store.js';

/** The actor id and name of changes made by the operator's CLI. */
const SYSTEM_ACTOR = 'system';

/** What a change records; the actor and the time come from the writer. */
export interface AuditChange {
  accountId: string;
  action: AuditAction;
  targetId: string;
  /** Never a secret: ids, names, roles, old and new values of plain fields. */
  metadata?: Record<string, unknown>;
}

/**
 * The audit log of every domain: the one writer and its readers. An entry carries the actor's
 * username, or their email when they have none (docs/interface.md, Resources).
 */
export function createAuditService(
  kernel: Pick<Kernel, 'db' | 'clock' | 'cursors'>,
  deps: { identity: IdentityService },
) {
  const { db, clock, cursors } = kernel;

  return {
    /** Records a change. Call it inside the transaction of the change, so neither lands alone. */
    async record(trx: Executor, actor: Actor, change: AuditChange): Promise<void> {
      let actorUsername = SYSTEM_ACTOR;
      if (actor) {
        const user = await deps.identity.getUser(actor.userId, trx);
        actorUsername = user.username ?? user.email;
      }
      await store.insertEntry(trx, {
        id: newId(),
        account_id: change.accountId,
        action: change.action,
        actor_id: actor?.userId ?? SYSTEM_ACTOR,
        actor_username: actorUsername,
        target_id: change.targetId,
        metadata: JSON.stringify(change.metadata ?? {}),
        created_at: clock.now().toISOString(),
      });
    },

    /** An account's log, newest first, keyset-paged on seq (index account_id, seq). */
    async log(accountId: string, page: { limit: number; cursor?: string }) {
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
    },

    /**
     * Entries of some actions in an account since a moment, and the oldest one's time (for quotas);
     * with `email`, only those whose metadata names that address.
     */
    countSince: (executor: Executor, accountId: string, actions: readonly string[], sinceIso: string, email?: string) =>
      store.countSince(executor, accountId, actions, sinceIso, email),
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
