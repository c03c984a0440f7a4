import type { ServerContext as Ctx } from '@modelcontextprotocol/server';
import { INTERACTIVE_CALL_MS, type McpRelay } from '../connectors/mcp.js';
import type { ServerSdk } from './mcp-server.js';

type Server = InstanceType<ServerSdk['Server']>;
type SamplingParams = Parameters<Ctx['mcpReq']['requestSampling']>[0];
type ElicitParams = Parameters<Ctx['mcpReq']['elicitInput']>[0];
type LogLevel = Parameters<Ctx['mcpReq']['log']>[0];

/** A round trip to the client must end before the upstream call that waits on it gives up. */
const ROUND_TRIP_MS = INTERACTIVE_CALL_MS - 30_000;

/** Where a 2026-07-28 request carries the log level it wants messages at (the SDK's LOG_LEVEL_META_KEY). */
const LOG_LEVEL_META_KEY = 'io.modelcontextprotocol/logLevel';

/**
 * The relay a tools/call lends the upstream call (docs/connectors.md, MCP pass-through): the
 * upstream's progress goes to this client under the progressToken it gave (none given, none
 * asked of the upstream), its log messages through the client's logging/setLevel filter, and its
 * sampling and elicitation requests to the client, on this request's stream.
 *
 * Only a 2025-era session can carry server-to-client requests: the SDK refuses them on
 * 2026-07-28 requests, whose multi-round-trip answers (input_required) a stateless gateway
 * cannot hold across requests; there, and for a client that did not declare the capability,
 * the upstream is not told Gantry can sample or elicit.
 *
 * Log messages are relayed only where the SDK would pass them on: always in a 2025-era session
 * (its logging/setLevel filters them), and on a 2026-07-28 request only when it carries a log
 * level. A relay without them lets the upstream call share a session (docs/mcp.md, Performance).
 */
export function relayOf(server: Server, ctx: Ctx, era: 'legacy' | 'modern'): McpRelay {
  const token = ctx.mcpReq._meta?.progressToken;
  const caps = era === 'legacy' ? server.getClientCapabilities() : undefined;
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const logs = era === 'legacy' || envelope?.[LOG_LEVEL_META_KEY] !== undefined;
  const quiet = () => undefined;
  return {
    ...(token !== undefined
      ? {
          onProgress: (progress: number, total?: number, message?: string) =>
            void ctx.mcpReq
              .notify({
                method: 'notifications/progress',
                params: {
                  progressToken: token,
                  progress,
                  ...(total !== undefined ? { total } : {}),
                  ...(message !== undefined ? { message } : {}),
                },
              })
              .catch(quiet),
        }
      : {}),
    ...(logs
      ? {
          onLog: (level: string, data: unknown, logger?: string) =>
            void ctx.mcpReq.log(level as LogLevel, data, logger).catch(quiet),
        }
      : {}),
    ...(caps?.sampling
      ? {
          sampling: {
            capability: caps.sampling,
            createMessage: (params) =>
              ctx.mcpReq.requestSampling(params as SamplingParams, {
                timeout: ROUND_TRIP_MS,
                signal: ctx.mcpReq.signal,
              }),
          },
        }
      : {}),
    ...(caps?.elicitation
      ? {
          elicitation: {
            capability: caps.elicitation,
            elicit: (params) =>
              ctx.mcpReq.elicitInput(params as ElicitParams, { timeout: ROUND_TRIP_MS, signal: ctx.mcpReq.signal }),
          },
        }
      : {}),
  };
}
