import type { ServerContext as Ctx } from '@modelcontextprotocol/server';
import { INTERACTIVE_CALL_MS, type McpRelay } from '../connectors/mcp.js';
import type { ServerSdk } from './mcp-server.js';

type Server = InstanceType<ServerSdk['Server']>;
type SamplingParams = Parameters<Ctx['mcpReq']['requestSampling']>[0];
type ElicitParams = Parameters<Ctx['mcpReq']['elicitInput']>[0];
type LogLevel = Parameters<Ctx['mcpReq']['log']>[0];

/** A round trip to the client must end before the upstream call that waits on it gives up. */
const ROUND_TRIP_MS = INTERACTIVE_CALL_MS - 30_000;

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
 */
export function relayOf(server: Server, ctx: Ctx, era: 'legacy' | 'modern'): McpRelay {
  const token = ctx.mcpReq._meta?.progressToken;
  const caps = era === 'legacy' ? server.getClientCapabilities() : undefined;
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
    onLog: (level, data, logger) => void ctx.mcpReq.log(level as LogLevel, data, logger).catch(quiet),
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
