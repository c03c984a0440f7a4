import type { Executor } from '../db/tx.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import * as store from './store.js';

/** Audit action identifiers, one list for every domain (docs/interface.md, Resources: member.invited, account.updated...). */
const AuditActions = [
  'account.created',
  'account.updated',
  'account.suspended',
  'account.activated',
  'account.deleted',
  'account.restored',
  'account.hard_deleted',
  'account.deletion_approved',
  'account.entitlement_granted',
  'account.entitlement_revoked',
  'member.added',
  'member.invited',
  'member.role_changed',
  'member.removed',
  'member.joined',
  'invitation.revoked',
  'invitation.resent',
  'invitation.accepted',
  'ownership.transfer_proposed',
  'ownership.transfer_accepted',
  'ownership.transfer_cancelled',
  'api_key.created',
  'api_key.revoked',
  'workspace.created',
  'workspace.renamed',
  'workspace.deleted',
  'workspace.member_added',
  'workspace.member_removed',
  'seat.release_requested',
  'seat.release_confirmed',
  'connector.created',
  'connector.updated',
  'connector.deleted',
  'connector.credentials_stored',
  'connector.credentials_deleted',
  'connector.oauth_linked',
  'connector.tool_created',
  'connector.tool_toggled',
  'connector.tool_approval_decided',
] as const;

export type AuditAction = (typeof AuditActions)[number];

export interface AuditEntry {
  accountId: string;
  action: AuditAction;
  actorId: string;
  /** The actor's username, or their email when they have none (docs/interface.md, Resources). */
  actorUsername: string;
  targetId: string;
  /** Never a secret: ids, names, roles, old and new values of plain fields. */
  metadata?: Record<string, unknown>;
  at: Date;
}

/** The one audit writer. Call it inside the transaction of the change it records. */
export async function recordAudit(executor: Executor, entry: AuditEntry): Promise<void> {
  await store.insertEntry(executor, {
    id: newId(),
    account_id: entry.accountId,
    action: entry.action,
    actor_id: entry.actorId,
    actor_username: entry.actorUsername,
    target_id: entry.targetId,
    metadata: JSON.stringify(entry.metadata ?? {}),
    created_at: entry.at.toISOString(),
  });
}

/** The actor name an audit entry carries for a user row. */
export const actorName = (user: { username: string | null; email: string }): string => user.username ?? user.email;

/** Who does a change: a signed-in user (or their API key), or null for the operator's CLI. */
export type Actor = { userId: string } | null;

/** The actor id and name of changes made by the operator's CLI. */
const SYSTEM_ACTOR = 'system';

/**
 * The audit writer bound to an actor: actorId and actorUsername resolved once per call, the
 * time from the clock. Same transaction rule as recordAudit.
 */
export function makeActorAudit(deps: {
  clock: Clock;
  getUser: (userId: string, executor: Executor) => Promise<{ username: string | null; email: string }>;
}) {
  return async function audit(
    trx: Executor,
    actor: Actor,
    entry: { accountId: string; action: AuditAction; targetId: string; metadata?: Record<string, unknown> },
  ) {
    const actorId = actor?.userId ?? SYSTEM_ACTOR;
    const username = actor ? actorName(await deps.getUser(actor.userId, trx)) : SYSTEM_ACTOR;
    await recordAudit(trx, { ...entry, actorId, actorUsername: username, at: deps.clock.now() });
  };
}
