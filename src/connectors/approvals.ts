import { OWNER_OR_ADMIN } from '../accounts/roles.js';
import { inTransaction } from '../db/tx.js';
import { conflict, notFound } from '../http/errors.js';
import { open } from '../lib/sealed.js';
import type { ConnectorsContext } from './context.js';
import type { Invoker } from './invoke.js';
import { assertRunnable, targetDigest } from './runnable.js';
import { MCP_APPROVAL_TTL_MS } from './approvals-mcp.js';
import { approvalStatus } from './presenters.js';
import { approvalInputContext } from './sealing.js';
import { approvalStore, toolStore } from './store/index.js';
import type { ApprovalRow } from './tables.js';
import { MCP_APPROVAL_DECIDED_TOPIC, type Actor } from './types.js';

/** Parked tool calls of a workspace: the list, and an owner/admin's decision (which runs the call). */
export function createApprovals(ctx: ConnectorsContext, invoker: Invoker) {
  const { db, clock, secrets } = ctx.kernel;

  async function view(actor: Actor, approvalId: string) {
    const decided = await approvalStore.findById(db, approvalId);
    const tool = await toolStore.find(db, decided.instance_id, decided.tool_id);
    return invoker.approvalView(actor, decided, tool?.input_schema ?? null);
  }

  /**
   * An MCP call's approval (approvals-mcp.ts): deciding runs nothing; an approval lets the
   * identical retry run once within MCP_APPROVAL_TTL_MS from now.
   */
  async function decideRetry(actor: Actor, approval: ApprovalRow, decision: 'approve' | 'reject') {
    const now = clock.now();
    const claimed = await inTransaction(db, async (trx) => {
      const status = decision === 'approve' ? 'approved' : 'rejected';
      const until = new Date(now.getTime() + MCP_APPROVAL_TTL_MS).toISOString();
      if (
        !(await approvalStore.decideRetry(trx, approval.id, status, actor.principal.userId, now.toISOString(), until))
      )
        return false;
      await ctx.audit(trx, actor, 'connector.tool_approval_decided', approval.id, {
        decision,
        toolId: approval.tool_id,
        clientId: approval.client_id,
      });
      // The MCP endpoint tells a 2025-era session that was shown the approval page (docs/mcp.md).
      await ctx.kernel.changes.publish(trx, MCP_APPROVAL_DECIDED_TOPIC, approval.id);
      return true;
    });
    if (!claimed)
      throw conflict(
        approvalStatus(approval, now) === 'expired' ? 'This approval expired' : 'This approval was already decided',
      );
    return view(actor, approval.id);
  }

  return {
    async listApprovals(actor: Actor, status?: string) {
      const rows = await approvalStore.list(db, actor.ws.workspaceId, status);
      return rows.map(({ input_schema, ...row }) => invoker.approvalView(actor, row, input_schema));
    },

    /**
     * An owner/admin decides a pending approval. Approve claims it (pending -> approved with
     * a conditional update, so it runs once), then runs the call and stores the result.
     */
    async decide(actor: Actor, approvalId: string, decision: 'approve' | 'reject') {
      ctx.access.assertWritable(actor.ws);
      ctx.access.requireRole(actor.ws, OWNER_OR_ADMIN);
      await ctx.approverProof.assert(actor);
      const now = clock.now().toISOString();
      const approval = await approvalStore.find(db, actor.ws.workspaceId, approvalId);
      if (!approval) throw notFound('Approval');
      if (approval.mode === 'retry') return decideRetry(actor, approval, decision);
      const claimed = await inTransaction(db, async (trx) => {
        if (
          !(await approvalStore.decide(
            trx,
            approvalId,
            decision === 'approve' ? 'approved' : 'rejected',
            actor.principal.userId,
            now,
          ))
        )
          return false;
        await ctx.audit(trx, actor, 'connector.tool_approval_decided', approvalId, {
          decision,
          toolId: approval.tool_id,
        });
        return true;
      });
      if (!claimed) throw conflict('This approval was already decided');
      if (decision === 'approve') {
        const instance = await ctx.requireInstance(actor.ws, approval.instance_id);
        const tool = await toolStore.find(db, approval.instance_id, approval.tool_id);
        let result: unknown;
        let status = 'approved';
        try {
          if (!tool) throw notFound('Tool');
          // Disabled since the request was parked: disabled tools never run (docs/interface.md, States).
          assertRunnable(instance, tool);
          // The approver approved a call against the instance and tool as they were when asked
          // (its origin is shown); if the url, headers or anything else of the config, or the
          // tool's schema, changed since, the call does not run.
          if (approval.target_digest === null || approval.target_digest !== targetDigest(instance, tool)) {
            throw conflict(
              `The connector instance or tool changed since this call was asked${approval.target_origin ? ` against ${approval.target_origin}` : ''}; it did not run: ask for it again`,
            );
          }
          result = await invoker.execute(
            instance,
            tool,
            JSON.parse(open(secrets, approval.input_sealed, approvalInputContext(approvalId))) as Record<
              string,
              unknown
            >,
            // The call is the requester's: a per_user instance runs it with their own link.
            approval.requested_by,
          );
        } catch (err) {
          status = 'failed';
          result = { error: (err as Error).message };
        }
        await approvalStore.saveResult(db, approvalId, status, JSON.stringify(result));
      }
      return view(actor, approvalId);
    },
  };
}
