import type { Executor } from '../db/tx.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import type { NotificationsService } from '../notifications/service.js';
import { makeActorAudit } from '../audit/record.js';
import { notFound } from '../http/errors.js';
import * as store from './store/index.js';

export interface AccountsDeps {
  kernel: Kernel;
  identity: IdentityService;
  notifications: NotificationsService;
}

export { type Actor } from '../audit/record.js';

/** Accounts that still exist for their members and for management. */
export const LIVE = ['active', 'suspended'];

/** The accounts domain's audit writer: the one in src/audit, with the actor's name from identity. */
export function makeAudit(deps: AccountsDeps) {
  return makeActorAudit({
    clock: deps.kernel.clock,
    getUser: (userId, executor) => deps.identity.getUser(userId, executor),
  });
}

/** An account that is still live (active or suspended); 404 otherwise. */
export async function liveAccount(db: Executor, accountId: string) {
  const account = await store.findAccount(db, accountId);
  if (!account || !LIVE.includes(account.status)) throw notFound('Account');
  return account;
}
