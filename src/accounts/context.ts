import type { Executor } from '../db/tx.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import type { NotificationsService } from '../notifications/service.js';
import type { AuditService } from '../audit/service.js';
import type { AccountAccess } from './access.js';
import { notFound } from '../http/errors.js';
import * as store from './store/index.js';

/**
 * What else ends when a user stops reaching workspaces as a member (removed from the account,
 * or from one workspace): other domains register these (docs/accounts.md, Member removal) and
 * they run inside the removal's transaction.
 */
export type MembershipEndedHook = (
  trx: Executor,
  ended: { accountId: string; userId: string; workspaceIds: string[]; by: Actor },
) => Promise<void>;

export interface AccountsDeps {
  kernel: Kernel;
  identity: IdentityService;
  notifications: NotificationsService;
  audit: AuditService;
  /** Who may act where; every use case calls `access.authorize` first. */
  access: AccountAccess;
  membershipEnded: MembershipEndedHook[];
}

import type { Actor } from '../audit/actions.js';
export type { Actor };

/** Accounts that still exist for their members and for management. */
export const LIVE = ['active', 'suspended'];

/** An account that is still live (active or suspended); 404 otherwise. */
export async function liveAccount(db: Executor, accountId: string) {
  const account = await store.findAccount(db, accountId);
  if (!account || !LIVE.includes(account.status)) throw notFound('Account');
  return account;
}
