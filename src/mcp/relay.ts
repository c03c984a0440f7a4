import type { ServerContext as Ctx } from '@modelcontextprotocol/server';
import type { McpRelay } from '../connectors/types.js';
import { type InputChannel, ROUND_TRIP_MS } from './input-rounds.js';
import type { ServerSdk } from './types.js';

type Server = InstanceType<ServerSdk['Server']>;
type SamplingParams = Parameters<Ctx['mcpReq']['requestSampling']>[0];
type ElicitParams = Parameters<Ctx['mcpReq']['elicitInput']>[0];
type LogLevel = Parameters<Ctx['mcpReq']['log']>[0];

/** 2026-07-28 URL elicitations carry no elicitationId (nor its completion notification). */
function withoutElicitationId(params: unknown): unknown {
  if (typeof params !== 'object' || params === null || !('elicitationId' in params)) return params;
  const { elicitationId: _, ...rest } = params as Record<string, unknown>;
  return rest;
}

/** Where a 2026-07-28 request carries the log level it wants messages at (the SDK's LOG_LEVEL_META_KEY). */
const LOG_LEVEL_META_KEY = 'io.modelcontextprotocol/logLevel';

/**
 * The relay a tools/call lends the upstream call (docs/connectors.md, MCP pass-through): the
 * upstream's progress goes to this client under the progressToken it gave (none given, none
 * asked of the upstream), its log messages through the client's logging/setLevel filter, and its
 * sampling and elicitation requests to the client: on this request's stream in a 2025-era
 * session; as input_required rounds (input-rounds.ts) for a 2026-07-28 request, whose later
 * rounds then carry the progress and log messages.
 *
 * Only what the client declared is offered upstream: without it (or without a round channel),
 * the upstream is not told Gantry can sample or elicit.
 *
 * Log messages are relayed only where the SDK would pass them on: always in a 2025-era session
 * (its logging/setLevel filters them), and on a 2026-07-28 request only when it carries a log
 * level. A relay without them lets the upstream call share a session (docs/mcp.md, Performance).
 */
export function relayOf(server: Server, ctx: Ctx, era: 'legacy' | 'modern', rounds?: InputChannel): McpRelay {
  const token = ctx.mcpReq._meta?.progressToken;
  const caps = era === 'legacy' ? server.getClientCapabilities() : rounds?.capabilities;
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const logs = era === 'legacy' || envelope?.[LOG_LEVEL_META_KEY] !== undefined;
  const quiet = () => undefined;
  const current = () => rounds?.ctx() ?? ctx;
  return {
    ...(token !== undefined
      ? {
          onProgress: (progress: number, total?: number, message?: string) =>
            void current()
              .mcpReq.notify({
                method: 'notifications/progress',
                params: {
                  progressToken: current().mcpReq._meta?.progressToken ?? token,
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
            void current()
              .mcpReq.log(level as LogLevel, data, logger)
              .catch(quiet),
        }
      : {}),
    ...(caps?.sampling
      ? {
          sampling: {
            capability: caps.sampling,
            createMessage: (params) =>
              rounds
                ? rounds.ask('sampling/createMessage', params)
                : ctx.mcpReq.requestSampling(params as SamplingParams, {
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
              rounds
                ? rounds.ask('elicitation/create', withoutElicitationId(params))
                : ctx.mcpReq.elicitInput(params as ElicitParams, { timeout: ROUND_TRIP_MS, signal: ctx.mcpReq.signal }),
          },
        }
      : {}),
  };
}
