import { OWNER_OR_ADMIN } from '../accounts/roles.js';
import { DomainError, conflict, notFound } from '../http/errors.js';
import { toBool } from '../db/tx.js';
import { rateLimitHeaders } from '../http/rate-limit.js';
import { argumentsDigest } from '../lib/canonical-json.js';
import { newId } from '../lib/ids.js';
import { MissingCredentialKeyError, open, seal } from '../lib/sealed.js';
import { approvalInputView } from './approval-input.js';
import type { ConnectorsContext } from './context.js';
import { originOf } from './credentials.js';
import type { ExposedTools } from './exposed-tools.js';
import { authRefusal } from './mcp.js';
import type { McpRelay } from './types.js';
import { createMcpReauth } from './mcp-reauth.js';
import { McpUnreachable, type McpSessions } from './mcp-sessions.js';
import { presentApproval } from './presenters.js';
import { approvalInputContext } from './sealing.js';
import { approvalStore, toolStore } from './store/index.js';
import type { ApprovalRow, InstanceRow, ToolRow } from './tables.js';
import { assertRunnable, canRunTools, targetDigest } from './runnable.js';
import type { Actor } from './types.js';
import { isPerUser } from './user-links.js';

/** An approval the MCP gate found granted for this very call (approvals-mcp.ts); single use. */
export interface GrantedApproval {
  consume(): Promise<boolean>;
}

export const upstream = (message: string) => new DomainError('UPSTREAM_FAILED', message);

/** What a parked REST call has none of: those columns bind MCP calls (approvals-mcp.ts). */
const PARKED = { mode: 'park', client_id: null, args_digest: null, expires_at: null, consumed_at: null } as const;

/** The tool execution span's opening attributes (GenAI semantic conventions); the tool's are added once found. */
const EXECUTE_TOOL = { attributes: { 'gen_ai.operation.name': 'execute_tool' } };

/** Running a tool call: now, or parked as a pending approval when the tool is gated. */
export function createInvoker(
  ctx: ConnectorsContext,
  exposed: Pick<ExposedTools, 'runnableRows'>,
  sessions: Pick<McpSessions, 'call'>,
) {
  const { db, clock, secrets, limiter, tracing } = ctx.kernel;
  const reauth = createMcpReauth(ctx);
  const invocations = ctx.kernel.metrics.counter(
    'gantry_connector_tool_invocations_total',
    'Connector tool invocations (REST and MCP), by outcome: completed, pending_approval, or the error code',
    ['outcome'],
  );

  /** The approvers (owner/admin) and the requester see the input they decide or asked for. */
  function approvalView(actor: Actor, row: ApprovalRow, inputSchema: string | null) {
    if (!OWNER_OR_ADMIN.includes(actor.ws.role) && row.requested_by !== actor.principal.userId)
      return presentApproval(row, clock.now());
    const input = JSON.parse(open(secrets, row.input_sealed, approvalInputContext(row.id))) as unknown;
    return presentApproval(
      row,
      clock.now(),
      approvalInputView(inputSchema ? (JSON.parse(inputSchema) as unknown) : undefined, input),
    );
  }

  /** Runs the call upstream as `userId` (whose own credential a per_user instance sends). */
  async function execute(
    instance: InstanceRow,
    tool: ToolRow,
    input: Record<string, unknown>,
    userId: string,
    relay?: McpRelay,
  ) {
    const def = await ctx.definitions.get(instance.connector_key, instance.workspace_id);
    if (!canRunTools(def)) throw conflict('This connector has no adapter that can run tools');
    const unreachable = (err: unknown) => {
      // A credential sealed with a key this node lacks is the operator's (503), not the server's.
      if (err instanceof DomainError || err instanceof MissingCredentialKeyError) return err;
      return upstream(`The MCP server could not be reached: ${(err as Error).message}`.slice(0, 300));
    };
    // A member's own session: never shared with another member's calls.
    const caller = { ...instance, slot: isPerUser(instance) ? `${instance.id}:${userId}` : instance.id };
    const attempt = async (retry: boolean): Promise<unknown> => {
      let target;
      try {
        target = await ctx.mcpTarget(instance, userId);
      } catch (err) {
        throw unreachable(err);
      }
      try {
        return await sessions.call(caller, target, tool.tool_key, input, relay);
      } catch (err) {
        // A refusal means the call did not run: after a refresh it may go once more. Whose
        // link is refreshed or waits for a new one is mcp-reauth.ts's (the caller's on per_user).
        const refusal = authRefusal(err instanceof McpUnreachable ? err.reason : err);
        if (
          refusal?.kind === 'token' &&
          (await reauth.tokenRefused(instance, userId, target.headers.authorization, retry))
        )
          return attempt(false);
        if (refusal?.kind === 'scope') return reauth.scopeRefused(instance, userId, refusal.scopes);
        if (err instanceof McpUnreachable) throw unreachable(err.reason);
        throw upstream(`The MCP server failed the call: ${(err as Error).message}`.slice(0, 300));
      }
    };
    return attempt(true);
  }

  const invoker = {
    approvalView,
    execute,

    /**
     * Runs a tool: input validated against its inputSchema, disabled tools and instances
     * refused, rateLimitRpm enforced per tool, approval-gated tools parked as a pending
     * approval (202) for an owner/admin, unless an MCP retry brings the approval it was granted.
     * An MCP call lends its relay (progress, logs, sampling, elicitation) to the upstream call.
     */
    async invoke(
      actor: Actor,
      instanceId: string,
      toolId: string,
      input: Record<string, unknown>,
      options: { approved?: GrantedApproval; relay?: McpRelay } = {},
    ) {
      ctx.assertWriter(actor.ws);
      // A tool the workspace serves now comes from the exposed catalog, the same rows SQL
      // holds (docs/mcp.md, Performance); any other is read, and refused below with its reason.
      const cached = await exposed.runnableRows(actor.ws.workspaceId, instanceId, toolId);
      const instance = cached?.instance ?? (await ctx.requireInstance(actor.ws, instanceId));
      const tool = cached ? cached.tool : await toolStore.find(db, instanceId, toolId);
      if (!tool) throw notFound('Tool');
      const span = tracing.activeSpan();
      if (span.isRecording()) {
        // The arguments only as the digest the audit row keeps (docs/operations.md, Traces).
        span.updateName(`execute_tool ${tool.tool_key}`);
        span.setAttributes({
          'gen_ai.tool.name': tool.tool_key,
          'gantry.connector.instance.id': instanceId,
          'gantry.tool.id': toolId,
          'gantry.tool.arguments_digest': argumentsDigest(input),
        });
      }
      assertRunnable(instance, tool);
      await ctx.definitions.assertValid(tool.input_schema, input, 'input', 'input');
      if (tool.rate_limit_rpm !== null) {
        const decision = await limiter.charge(`connector-tool:${tool.id}`, {
          limit: tool.rate_limit_rpm,
          windowSec: 60,
          acrossNodes: true,
        });
        if (!decision.allowed)
          throw new DomainError(
            'RATE_LIMIT_EXCEEDED',
            `This tool allows ${tool.rate_limit_rpm} calls per minute`,
            undefined,
            rateLimitHeaders(decision, clock.now().getTime()),
          );
      }
      if (toBool(tool.requires_approval) && options.approved) {
        // An MCP retry whose approval the gate found (approvals-mcp.ts): used here, after the
        // checks above, so a refused retry does not spend it; used once, whoever races.
        if (!(await options.approved.consume()))
          throw conflict('An identical call used this approval first; call again to ask for a new approval');
        span.addEvent('gantry.approval.consumed');
      } else if (toBool(tool.requires_approval)) {
        // A parked call runs as its requester: a per_user instance needs their own link first.
        await ctx.assertLinked(instance, actor.principal.userId);
        const id = newId();
        const def = await ctx.definitions.get(instance.connector_key, instance.workspace_id);
        const targetOrigin =
          def?.adapter === 'mcp' ? originOf((JSON.parse(instance.config) as { url?: unknown }).url) : null;
        const row = {
          id,
          workspace_id: actor.ws.workspaceId,
          instance_id: instanceId,
          tool_id: toolId,
          input_sealed: seal(secrets, JSON.stringify(input), approvalInputContext(id)),
          status: 'pending',
          requested_by: actor.principal.userId,
          decided_by: null,
          decided_at: null,
          result: null,
          target_origin: targetOrigin,
          target_digest: targetDigest(instance, tool),
          created_at: clock.now().toISOString(),
          ...PARKED,
        };
        await approvalStore.insert(db, row);
        return {
          status: 202,
          body: {
            status: 'pending_approval',
            approval: approvalView(actor, { ...row, seq: 0 }, tool.input_schema),
            result: null,
          },
        };
      }
      const result = await execute(instance, tool, input, actor.principal.userId, options.relay);
      return { status: 200, body: { status: 'completed', approval: null, result } };
    },
  };
  const { invoke } = invoker;
  const counted = {
    ...invoker,
    async invoke(...args: Parameters<typeof invoke>) {
      try {
        const out = await invoke(...args);
        invocations.inc({ outcome: out.body.status });
        tracing.activeSpan().setAttribute('gantry.tool.outcome', out.body.status);
        return out;
      } catch (err) {
        // Error codes are a closed list (docs/interface.md): a bounded label.
        const outcome =
          err instanceof DomainError
            ? err.code.toLowerCase()
            : err instanceof MissingCredentialKeyError
              ? 'not_configured' // answered 503 NOT_CONFIGURED (docs/postgres.md, Secrets)
              : 'failed';
        invocations.inc({ outcome });
        throw err;
      }
    },
  };
  return {
    ...counted,
    /** Inside the tool execution span (docs/operations.md, Traces): the vault and the upstream call are its children. */
    invoke: (...args: Parameters<typeof invoke>) =>
      tracing.enabled
        ? tracing.inSpan('execute_tool', EXECUTE_TOOL, () => counted.invoke(...args))
        : counted.invoke(...args),
  };
}

export type Invoker = ReturnType<typeof createInvoker>;
