import { OWNER_OR_ADMIN } from '../accounts/roles.js';
import { DomainError, forbidden, notFound } from '../http/errors.js';
import { userPrincipal } from '../http/auth.js';
import { isUuid } from '../lib/ids.js';
import type { createApprovals } from './approvals.js';
import type { ConnectorsContext } from './context.js';
import type { Invoker } from './invoke.js';
import { approvalStore, instanceStore, toolStore } from './store/index.js';
import type { Actor } from './types.js';

/**
 * The approval page's use cases: an approval found by its id alone (the page URL carries
 * nothing else), shown to and decided by an owner/admin of its workspace's account only.
 */
export function createApprovalReview(
  ctx: ConnectorsContext,
  invoker: Invoker,
  approvals: ReturnType<typeof createApprovals>,
) {
  const { db } = ctx.kernel;

  /** `sessionId`: the identity session under the page's browser sign-in (the step-up rule reads its proof). */
  async function approverOf(userId: string, sessionId: string, approvalId: string) {
    const row = isUuid(approvalId) ? await approvalStore.lookup(db, approvalId) : undefined;
    if (!row) throw notFound('Approval');
    const principal = { ...userPrincipal(userId), sessionId };
    const denied = () => forbidden("Only the owners and admins of this workspace's account decide its approvals");
    const ws = await ctx.access.workspace(principal, { workspaceId: row.workspace_id }).catch((err: unknown) => {
      throw err instanceof DomainError && (err.status === 403 || err.status === 404) ? denied() : err;
    });
    if (!OWNER_OR_ADMIN.includes(ws.role)) throw denied();
    return { actor: { principal, ws } satisfies Actor, row };
  }

  return {
    /** What the page shows: the approval (input redacted as on the REST API), its instance and tool. */
    async review(userId: string, sessionId: string, approvalId: string) {
      const { actor, row } = await approverOf(userId, sessionId, approvalId);
      const instance = await instanceStore.find(db, row.workspace_id, row.instance_id);
      const tool = await toolStore.find(db, row.instance_id, row.tool_id);
      return {
        approval: invoker.approvalView(actor, row, tool?.input_schema ?? null),
        accountId: actor.ws.accountId,
        workspaceId: row.workspace_id,
        instanceName: instance?.display_name ?? null,
        toolName: tool?.display_name ?? null,
        toolKey: tool?.tool_key ?? null,
        /** Whether this session may decide now, must prove a second factor first, or cannot (approver-proof.ts). */
        approver: await ctx.approverProof.standing(actor),
      };
    },

    /** The page's Approve or Reject: the same decision (and step-up rule) as the REST endpoint. */
    async decide(userId: string, sessionId: string, approvalId: string, decision: 'approve' | 'reject') {
      const { actor } = await approverOf(userId, sessionId, approvalId);
      return approvals.decide(actor, approvalId, decision);
    },
  };
}
