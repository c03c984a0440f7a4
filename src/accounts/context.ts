import type { Executor } from '../db/tx.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import type { NotificationsService } from '../notifications/service.js';
import { actorName, recordAudit, type AuditAction } from '../audit/record.js';
import { notFound } from '../http/errors.js';
import * as store from './store.js';

export interface AccountsDeps {
  kernel: Kernel;
  identity: IdentityService;
  notifications: NotificationsService;
}

/** Who does a change: a signed-in user (or their API key), or null for the operator's CLI. */
export type Actor = { userId: string } | null;

export const SYSTEM_ACTOR = 'system';

/** Accounts that still exist for their members and for management. */
export const LIVE = ['active', 'suspended'];

/** The audit writer bound to an actor: actorId/actorUsername resolved once per call. */
export function makeAudit(deps: AccountsDeps) {
  return async function audit(trx: Executor, actor: Actor, entry: { accountId: string; action: AuditAction; targetId: string; metadata?: Record<string, unknown> }) {
    const actorId = actor?.userId ?? SYSTEM_ACTOR;
    const username = actor ? actorName(await deps.identity.getUser(actor.userId, trx)) : SYSTEM_ACTOR;
    await recordAudit(trx, { ...entry, actorId, actorUsername: username, at: deps.kernel.clock.now() });
  };
}

export type Audit = ReturnType<typeof makeAudit>;

/** An account that is still live (active or suspended); 404 otherwise. */
export async function liveAccount(db: Executor, accountId: string) {
  const account = await store.findAccount(db, accountId);
  if (!account || !LIVE.includes(account.status)) throw notFound('Account');
  return account;
}
