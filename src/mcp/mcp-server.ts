import type { ConnectorsService } from '../connectors/service.js';
import { DomainError } from '../http/errors.js';
import type { Kernel } from '../kernel.js';
import { callerOf, type McpCaller } from './caller.js';
import { SERVER_INFO } from './direct.js';
import type { ApprovalPrompts } from './approval-prompts.js';
import type { InputChannel, InputRounds } from './input-rounds.js';
import { relayOf } from './relay.js';
import type { ToolCalls } from './tool-calls.js';
import type { ServerSdk } from './types.js';
import type { Tracing } from '../lib/tracing.js';
import { settleMcpSpan } from './spans.js';

type ExposedTool = Awaited<ReturnType<ConnectorsService['tools']['listExposed']>>[number];

/** Tools per tools/list page. */
const PAGE_SIZE = 100;

/** A workspace tool as MCP lists it; its schemas pass through unchanged. */
export function toMcpTool(tool: ExposedTool) {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
  };
}

/**
 * The caller's tools, one page: in listExposed's order (by name), a signed cursor holding the
 * last name served, so a page boundary stays put when tools come and go between pages.
 */
export function createToolListing(kernel: Pick<Kernel, 'cursors'>, connectors: ConnectorsService) {
  // Pages by the catalog's list, one shared object per workspace until its tools change
  // (docs/mcp.md, Performance), and by where they start: a page and its cursor are the same
  // for everyone who asks until then.
  const pages = new WeakMap<object, Map<number, { tools: ReturnType<typeof toMcpTool>[]; nextCursor?: string }>>();
  return async (caller: McpCaller, cursor: string | undefined) => {
    const tools = await connectors.tools.listExposed(caller.ws);
    const scope = `mcp-tools:${caller.ws.workspaceId}`;
    let start = 0;
    if (cursor !== undefined) {
      const after = kernel.cursors.decode<{ after?: unknown }>(scope, cursor).after;
      start = tools.findIndex((t) => t.name > String(after));
      if (start < 0) start = tools.length;
    }
    let byStart = pages.get(tools);
    if (!byStart) pages.set(tools, (byStart = new Map()));
    let result = byStart.get(start);
    if (!result) {
      const page = kernel.cursors.page(scope, tools.slice(start, start + PAGE_SIZE + 1), PAGE_SIZE, (t) => ({
        after: t.name,
      }));
      result = { tools: page.items.map(toMcpTool), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      byStart.set(start, result);
    }
    // A copy of the envelope: the SDK adds its own fields to what a handler returns.
    return { ...result };
  };
}

type ToolListing = ReturnType<typeof createToolListing>;

/**
 * One MCP server instance (the SDK makes one per modern request and one per legacy session):
 * tools (list, call), logging and ping. The caller comes with each request (authInfo), never
 * from the instance, so a legacy session always acts as the request's verified token.
 */
export function createServerFactory(
  sdk: ServerSdk,
  deps: { list: ToolListing; calls: ToolCalls; prompts: ApprovalPrompts; rounds: InputRounds; tracing: Tracing },
) {
  const { tracing } = deps;
  const invalidParams = (message: string) => new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, message);
  /**
   * A handler's answer on the request's MCP span (spans.ts), as the direct path records it: the
   * JSON-RPC error code the SDK answers a throw with (its own, else internal error), or tool_error.
   */
  const settled = <T>(answer: () => Promise<T>): Promise<T> => {
    if (!tracing.enabled) return answer();
    const span = tracing.activeSpan();
    return answer().then(
      (result) => {
        settleMcpSpan(tracing, span, { result });
        return result;
      },
      (err: unknown) => {
        const code = err instanceof sdk.ProtocolError ? err.code : sdk.ProtocolErrorCode.InternalError;
        settleMcpSpan(tracing, span, { error: { code } });
        throw err;
      },
    );
  };
  // list_changed reaches 2025-era sessions on their GET stream and 2026-07-28 clients on their
  // subscriptions/listen stream (docs/mcp.md, list_changed).
  return ({ era }: { era: 'legacy' | 'modern' }) => {
    const server = new sdk.Server({ ...SERVER_INFO }, { capabilities: { tools: { listChanged: true }, logging: {} } });
    server.setRequestHandler('tools/list', (request, ctx) =>
      settled(async () => {
        const cursor = (request.params as { cursor?: string } | undefined)?.cursor;
        try {
          return (await deps.list(callerOf(ctx), cursor)) as never;
        } catch (err) {
          if (err instanceof DomainError && err.code === 'VALIDATION_FAILED') throw invalidParams(err.message);
          throw err;
        }
      }),
    );
    server.setRequestHandler('tools/call', (request, ctx) =>
      settled(async () => {
        const { name, arguments: args } = request.params;
        const caller = callerOf(ctx);
        const input = (args ?? {}) as Record<string, unknown>;
        const run = (rounds?: InputChannel) => deps.calls.call(caller, name, input, relayOf(server, ctx, era, rounds));
        // 2026-07-28: the upstream's sampling and elicitation become input_required rounds (input-rounds.ts).
        const served =
          era === 'modern' ? await deps.rounds.serve(ctx, caller, name, input, run) : { answer: await run() };
        if ('input' in served) return served.input as never;
        const answer = served.answer;
        if (!answer) throw invalidParams(await deps.calls.unknownToolMessage(caller, name));
        // A pending approval's page, or the page to link one's own account, by URL elicitation
        // where the client declared it (approval-prompts.ts).
        const prompted = answer.pending
          ? deps.prompts.prompt(server, ctx, era, name, answer.pending)
          : answer.link && deps.prompts.link(server, ctx, era, name, answer.link);
        return (prompted || answer.result) as never;
      }),
    );
    return server;
  };
}

export type ServerFactory = ReturnType<typeof createServerFactory>;
