import type { Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';

/** Audit action identifiers, one list for every domain (spec: member.invited, account.updated...). */
export const AuditActions = [
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
  /** The actor's username, or their email when they have none (CONTRACT.md). */
  actorUsername: string;
  targetId: string;
  /** Never a secret: ids, names, roles, old and new values of plain fields. */
  metadata?: Record<string, unknown>;
  at: Date;
}

/** The one audit writer. Call it inside the transaction of the change it records. */
export async function recordAudit(executor: Executor, entry: AuditEntry): Promise<void> {
  await executor
    .insertInto('account_audit_log')
    .values({
      id: newId(),
      account_id: entry.accountId,
      action: entry.action,
      actor_id: entry.actorId,
      actor_username: entry.actorUsername,
      target_id: entry.targetId,
      metadata: JSON.stringify(entry.metadata ?? {}),
      created_at: entry.at.toISOString(),
    })
    .execute();
  // The per-account count keeps the log's meta.total O(1) on every page.
  await executor
    .insertInto('account_audit_counts')
    .values({ account_id: entry.accountId, total: 1 })
    .onConflict((oc) => oc.column('account_id').doUpdateSet((eb) => ({ total: eb('account_audit_counts.total', '+', 1) })))
    .execute();
}

/** The actor name an audit entry carries for a user row. */
export const actorName = (user: { username: string | null; email: string }): string => user.username ?? user.email;
