import type { WorkspaceContext } from '../accounts/access.js';
import { inTransaction, toBool } from '../db/tx.js';
import type { Principal } from '../http/auth.js';
import { notFound } from '../http/errors.js';
import { argumentsDigest } from '../lib/canonical-json.js';
import { newId } from '../lib/ids.js';
import { seal } from '../lib/sealed.js';
import type { ConnectorsContext } from './context.js';
import { originOf } from './credentials.js';
import { assertRunnable, targetDigest } from './runnable.js';
import { approvalInputContext } from './sealing.js';
import { approvalStore, toolStore } from './store/index.js';
import { approvalStatus } from './presenters.js';
import type { ApprovalRow } from './tables.js';
import { MCP_APPROVAL_DECIDED_TOPIC, type McpApprovalInfo } from './types.js';

/** How long a new MCP approval may be decided, and an approved one used (docs/connectors.md). */
export const MCP_APPROVAL_TTL_MS = 10 * 60 * 1000;

/** Where an approval's page is: its id only, no credential and no personal data (an MCP URL elicitation opens it). */
export const approvalPagePath = (id: string) => `/approvals/${encodeURIComponent(id)}`;

/** What the MCP endpoint asks about a `tools/call`. */
export interface McpCallGate {
  ws: WorkspaceContext;
  userId: string;
  /** The OAuth client of the MCP access token. */
  clientId: string;
  /** The exposed tool (exposed-tools.ts): its instance, its id and the name the client called. */
  tool: { instanceId: string; toolId: string; name: string };
  args: Record<string, unknown>;
}

export type McpGate =
  | {
      proceed: true;
      /** Null when the tool needs no approval. */
      approvalId: string | null;
      argsDigest: string;
      /**
       * Uses the approval, once: true when this call may run now, false when an identical
       * call used it first (do not run; gate again, which asks for a new approval).
       */
      consume(): Promise<boolean>;
    }
  | { proceed: false; argsDigest: string; approval: McpApprovalInfo };

const mcpPrincipal = (userId: string, clientId: string): Principal => ({
  userId,
  kind: 'oauth',
  scopes: null,
  clientId,
  sessionId: null,
  accountId: null,
  tokenId: null,
});

/**
 * Approval of MCP tool calls (docs/connectors.md, Approvals of MCP calls): a gated call asks
 * for an approval bound to workspace, user, client, tool, target and argument digest; once an
 * owner/admin approves, the identical retry runs exactly once. Nothing waits meanwhile.
 */
export function createMcpApprovals(ctx: ConnectorsContext) {
  const { db, clock, secrets, config, tracing } = ctx.kernel;
  const urlOf = (id: string) => `${config.publicUrl}${approvalPagePath(id)}`;

  const approvals = {
    /** Calls back with an approval's id when an owner/admin decided it (in any process). */
    onDecided(listener: (approvalId: string) => void): () => void {
      return ctx.kernel.changes.subscribe(MCP_APPROVAL_DECIDED_TOPIC, (key) => {
        if (key) listener(key);
      });
    },

    async gateMcpCall(input: McpCallGate): Promise<McpGate> {
      const { ws, userId, clientId, args } = input;
      // Who may call tools over REST may call them over MCP (docs/connectors.md, Roles).
      ctx.assertWriter(ws);
      const instance = await ctx.requireInstance(ws, input.tool.instanceId);
      const tool = await toolStore.find(db, instance.id, input.tool.toolId);
      if (!tool) throw notFound('Tool');
      assertRunnable(instance, tool);
      // An approver is never asked about a call that could not run: the arguments are checked first.
      await ctx.definitions.assertValid(tool.input_schema, args, 'input', 'input');
      const argsDigest = argumentsDigest(args);
      if (!toBool(tool.requires_approval))
        return { proceed: true, approvalId: null, argsDigest, consume: async () => true };
      // Nor about a call its member could not make: a per_user instance needs their own link.
      await ctx.assertLinked(instance, userId);
      const binding = {
        workspace_id: ws.workspaceId,
        requested_by: userId,
        client_id: clientId,
        instance_id: instance.id,
        tool_id: tool.id,
        args_digest: argsDigest,
        // A changed url, config or schema is another target: what was approved does not match.
        target_digest: targetDigest(instance, tool),
      };
      const actor = { principal: mcpPrincipal(userId, clientId), ws };
      // Read before the transaction: it holds the one connection (db/tx.ts).
      const def = await ctx.definitions.get(instance.connector_key, instance.workspace_id);
      const notified = await ctx.approvers(ws.accountId);
      return inTransaction(db, async (trx): Promise<McpGate> => {
        const now = clock.now();
        const at = now.toISOString();
        const found = await approvalStore.findBinding(trx, binding);
        const status = found ? approvalStatus(found, now) : null;
        if (found && status === 'approved') {
          const id = found.id;
          return {
            proceed: true,
            approvalId: id,
            argsDigest,
            consume: () =>
              inTransaction(db, async (t) => {
                if (!(await approvalStore.consume(t, id, clock.now().toISOString(), 'approved'))) return false;
                await ctx.audit(t, actor, 'connector.tool_approval_consumed', id, {
                  toolId: tool.id,
                  clientId,
                  argsDigest,
                });
                return true;
              }),
          };
        }
        if (found && status === 'pending') return { proceed: false, argsDigest, approval: info(found, 'pending') };
        // A refusal is told once; the retry after it asks again.
        if (
          found &&
          (status === 'rejected' || status === 'expired') &&
          (await approvalStore.consume(trx, found.id, at))
        )
          return { proceed: false, argsDigest, approval: info(found, status) };
        const id = newId();
        const row = {
          ...binding,
          id,
          tool_id: tool.id,
          input_sealed: seal(secrets, JSON.stringify(args), approvalInputContext(id)),
          status: 'pending',
          decided_by: null,
          decided_at: null,
          result: null,
          target_origin:
            def?.adapter === 'mcp' ? originOf((JSON.parse(instance.config) as { url?: unknown }).url) : null,
          created_at: at,
          mode: 'retry',
          expires_at: new Date(now.getTime() + MCP_APPROVAL_TTL_MS).toISOString(),
          consumed_at: null,
        };
        await approvalStore.insert(trx, row);
        for (const approver of notified) {
          await ctx.notifications.notify(trx, {
            userId: approver,
            title: `Approval needed: ${input.tool.name}`.slice(0, 200),
            body: `An MCP client asks to run ${tool.display_name} of ${instance.display_name}. Approve or reject it within ${MCP_APPROVAL_TTL_MS / 60000} minutes; the call runs when it is retried after approval.`,
            category: 'connector_approval',
            priority: 'high',
            actionUrl: urlOf(id),
            expiresAt: new Date(row.expires_at),
          });
        }
        return { proceed: false, argsDigest, approval: info({ ...row, seq: 0 }, 'pending') };
      });

      function info(row: ApprovalRow, status: McpApprovalInfo['status']): McpApprovalInfo {
        return { id: row.id, status, url: urlOf(row.id), expiresAt: row.expires_at ?? '' };
      }
    },
  };

  /**
   * The gate's span (docs/operations.md, Traces): the tool, the arguments' digest (the audit
   * row's) and what the gate decided: not_required, approved, or the waiting or refused
   * approval's status.
   */
  function gateMcpCall(input: McpCallGate): Promise<McpGate> {
    if (!tracing.enabled) return approvals.gateMcpCall(input);
    const attributes = { 'gen_ai.tool.name': input.tool.name, 'gantry.tool.id': input.tool.toolId };
    return tracing.inSpan('approval gate', { attributes }, async (span) => {
      const gated = await approvals.gateMcpCall(input);
      span.setAttributes({
        'gantry.tool.arguments_digest': gated.argsDigest,
        'gantry.approval.outcome': gated.proceed
          ? gated.approvalId
            ? 'approved'
            : 'not_required'
          : gated.approval.status,
      });
      const approvalId = gated.proceed ? gated.approvalId : gated.approval.id;
      if (approvalId) span.setAttribute('gantry.approval.id', approvalId);
      return gated;
    });
  }

  return { ...approvals, gateMcpCall };
}
