import type { AuditService } from '../audit/service.js';
import type { McpApprovalInfo, McpRelay } from '../connectors/types.js';
import { LinkRequired, type ConnectorsService } from '../connectors/service.js';
import { inTransaction } from '../db/tx.js';
import { DomainError } from '../http/errors.js';
import type { Kernel } from '../kernel.js';
import type { McpCaller } from './caller.js';
import { argumentsDigest } from '../lib/canonical-json.js';
import { missingKeyMessage, type MissingKeyReport } from '../lib/missing-key.js';
import { MissingCredentialKeyError } from '../lib/sealed.js';

type ExposedTool = NonNullable<Awaited<ReturnType<ConnectorsService['tools']['findExposed']>>['tool']>;

/** A `tools/call` result as MCP defines it; an upstream's own result passes through unchanged. */
export type ToolCallResult = Record<string, unknown> & { content: unknown[]; isError?: boolean };

/** How a call ended, as the audit row records it. */
type Outcome =
  | 'completed'
  | 'tool_error'
  | 'pending_approval'
  | 'invalid_arguments'
  | 'rate_limited'
  | 'refused'
  | 'link_required'
  | 'upstream_failed'
  | 'not_configured';

interface Ended {
  outcome: Outcome;
  result: ToolCallResult;
  approvalId?: string;
  /** The approval the call waits for, when it is pending (the endpoint may show its page instead). */
  pending?: McpApprovalInfo;
  /** Where the caller links their own account, when the call needs it (per_user instances). */
  link?: LinkInfo;
}

/** A per_user instance the caller has no usable link for: where to link it. */
interface LinkInfo {
  instanceId: string;
  url: string;
}

/** A call's answer: the result, and the pending approval when it waits for one. */
export interface CallAnswer {
  result: ToolCallResult;
  pending: McpApprovalInfo | null;
  link: LinkInfo | null;
}

/** A result the model reads: one text block, flagged as an error. */
const toolError = (text: string, meta?: Record<string, unknown>): ToolCallResult => ({
  content: [{ type: 'text', text }],
  isError: true,
  ...(meta ? { _meta: meta } : {}),
});

/**
 * Refusals of the invoke path the model can act on become `isError` results (it can fix its
 * arguments or wait), not protocol errors (docs/mcp.md, Calls). Anything else is rethrown.
 */
function refusal(err: unknown, reportMissingKey: MissingKeyReport): Ended {
  if (err instanceof MissingCredentialKeyError) {
    // A node a key rotation did not reach (docs/postgres.md, Secrets): the operator's to fix,
    // which the model can only pass on; the REST path answers 503 NOT_CONFIGURED.
    reportMissingKey(err.keyId);
    return {
      outcome: 'not_configured',
      result: toolError(
        `This tool could not run: this server is missing a credential key that an operator must provide. ${missingKeyMessage(err.keyId)}`,
      ),
    };
  }
  if (err instanceof LinkRequired) {
    // docs/mcp.md, Calls: the caller's own account is missing (per_user); the model tells the human.
    const link = { instanceId: err.instanceId, url: err.linkUrl };
    return {
      outcome: 'link_required',
      link,
      result: toolError(
        `This tool runs with your own account at its server, and it is not linked: it was not run. ${err.message} ` +
          'Once linked, call it again.',
        { 'io.gantry/link': link },
      ),
    };
  }
  if (!(err instanceof DomainError)) throw err;
  switch (err.code) {
    case 'VALIDATION_FAILED':
      return { outcome: 'invalid_arguments', result: toolError(`Invalid arguments: ${err.message}`) };
    case 'RATE_LIMIT_EXCEEDED': {
      const retryAfter = Number(err.headers['Retry-After'] ?? 60);
      return {
        outcome: 'rate_limited',
        result: toolError(`Rate limited: ${err.message}. Retry after ${retryAfter} seconds.`, {
          'io.gantry/retryAfterSeconds': retryAfter,
        }),
      };
    }
    case 'UPSTREAM_FAILED':
      return { outcome: 'upstream_failed', result: toolError(err.message) };
    case 'CONFLICT':
    case 'FORBIDDEN':
    case 'ACCOUNT_SUSPENDED':
    case 'NOT_FOUND':
      return { outcome: 'refused', result: toolError(`The call was refused: ${err.message}`) };
    default:
      throw err;
  }
}

/** An upstream answer as a tools/call result (a server that answers no content gets an empty list). */
function passThrough(answer: unknown): Ended {
  const result = { content: [], ...(answer as Record<string, unknown>) } as ToolCallResult;
  return { outcome: result.isError === true ? 'tool_error' : 'completed', result };
}

/**
 * MCP `tools/call` over the connectors' invoke path, the one the REST endpoint runs: arguments
 * validated against the tool's schema, disabled tools refused, the tool's rateLimitRpm,
 * credentials from the vault (the client's token never leaves this process), and one audit
 * row per call with a digest of the arguments, never the arguments.
 */
export function createToolCalls(
  kernel: Pick<Kernel, 'db' | 'metrics' | 'reportMissingKey'>,
  deps: { connectors: ConnectorsService; audit: AuditService },
) {
  const { db } = kernel;
  const counted = kernel.metrics.counter('gantry_mcp_tool_calls_total', 'MCP tools/call by outcome', ['outcome']);
  const { connectors, audit } = deps;
  const actorOf = (caller: McpCaller) => ({ principal: caller.principal, ws: caller.ws });

  /** A tool that needs no approval: run now. */
  async function run(caller: McpCaller, tool: ExposedTool, args: Record<string, unknown>, relay?: McpRelay) {
    const out = await connectors.tools.invoke(actorOf(caller), tool.instanceId, tool.toolId, args, { relay });
    return passThrough(out.body.result);
  }

  /**
   * The approval gate of an MCP call (docs/connectors.md, Approvals of MCP calls): an approval
   * granted for this user, client, tool and these exact arguments lets the call run once;
   * otherwise the model is told the call is pending (or was refused), with the approval page
   * for a human, and to retry with identical arguments. Nothing is held open meanwhile.
   */
  async function gate(
    caller: McpCaller,
    tool: ExposedTool,
    args: Record<string, unknown>,
    relay?: McpRelay,
  ): Promise<Ended> {
    const gated = await connectors.approvals.gateMcpCall({
      ws: caller.ws,
      userId: caller.principal.userId,
      clientId: caller.token.clientId,
      tool: { instanceId: tool.instanceId, toolId: tool.toolId, name: tool.name },
      args,
    });
    if (gated.proceed) {
      const out = await connectors.tools.invoke(actorOf(caller), tool.instanceId, tool.toolId, args, {
        approved: gated,
        relay,
      });
      return { ...passThrough(out.body.result), ...(gated.approvalId ? { approvalId: gated.approvalId } : {}) };
    }
    const { approval } = gated;
    const text =
      approval.status === 'pending'
        ? `This call needs approval by a workspace owner or admin; it was not run. Ask them to approve it at ${approval.url} ` +
          `(before ${approval.expiresAt}), then retry with exactly the same arguments: the retry runs once.`
        : `This call's approval was ${approval.status}; it was not run. Retrying asks for a new approval.`;
    return {
      outcome: approval.status === 'pending' ? 'pending_approval' : 'refused',
      approvalId: approval.id,
      result: toolError(text, { 'io.gantry/approval': approval }),
      ...(approval.status === 'pending' ? { pending: approval } : {}),
    };
  }

  return {
    /** The call's answer, or null when the workspace serves no tool by that name; the relay goes upstream. */
    async call(
      caller: McpCaller,
      name: string,
      args: Record<string, unknown>,
      relay?: McpRelay,
    ): Promise<CallAnswer | null> {
      const { tool } = await connectors.tools.findExposed(caller.ws, name);
      if (!tool) return null;
      // From now on the name means this tool only (docs/connectors.md, Tool names).
      await connectors.tools.bindCalledName(caller.ws, tool);
      const started = performance.now();
      const ended = await (tool.requiresApproval ? gate : run)(caller, tool, args, relay).catch((err: unknown) =>
        refusal(err, kernel.reportMissingKey),
      );
      counted.inc({ outcome: ended.outcome });
      await inTransaction(db, (trx) =>
        audit.record(trx, caller.principal, {
          accountId: caller.ws.accountId,
          action: 'mcp.tool_called',
          targetId: tool.toolId,
          metadata: {
            workspaceId: caller.ws.workspaceId,
            instanceId: tool.instanceId,
            tool: name,
            clientId: caller.token.clientId,
            argumentsSha256: argumentsDigest(args),
            outcome: ended.outcome,
            latencyMs: Math.round(performance.now() - started),
            ...(ended.approvalId ? { approvalId: ended.approvalId } : {}),
          },
        }),
      );
      return { result: ended.result, pending: ended.pending ?? null, link: ended.link ?? null };
    },

    /** Why no tool answers to a name: none ever did, or the one agents called by it was renamed or removed. */
    async unknownToolMessage(caller: McpCaller, name: string): Promise<string> {
      const { retired } = await connectors.tools.findExposed(caller.ws, name);
      return retired
        ? `Unknown tool: ${name}. A tool was called by this name before; it has been renamed or removed, and the name ` +
            'is never given to another tool. List the tools again.'
        : `Unknown tool: ${name}`;
    },
  };
}

export type ToolCalls = ReturnType<typeof createToolCalls>;
