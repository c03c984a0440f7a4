import { DomainError } from '../http/errors.js';
import type { Logger } from '../lib/logger.js';
import type { McpRelay } from '../connectors/types.js';
import type { McpCaller } from './caller.js';
import type { ToolCalls } from './tool-calls.js';
import type { ServerSdk } from './types.js';

/** What the SDK's server says it is; the direct path stamps the same into 2026-07-28 results. */
export const SERVER_INFO = Object.freeze({ name: 'gantry', title: 'Gantry', version: '0.1.0' });

const MODERN = '2026-07-28';
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
const PROGRESS_TOKEN = 'progressToken';
const LOG_LEVEL_META_KEY = 'io.modelcontextprotocol/logLevel';
const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';

type Json = Record<string, unknown>;
/** What the direct path asks of a session's SDK server: the client's capabilities. */
type SessionServer = Pick<InstanceType<ServerSdk['Server']>, 'getClientCapabilities'>;

/** MCP's log levels (RFC 5424's severities), least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
type Era = 'modern' | 'legacy';

/** A request the direct path takes: one of the two hot methods, its id and params. */
interface Hot {
  id: string | number;
  method: 'tools/call' | 'tools/list';
  params: Json;
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** HTTP's optional whitespace off a header value, as the SDK reads the MCP headers. */
const headerOf = (headers: Record<string, unknown>, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value.replace(/^[ \t]+|[ \t]+$/g, '') : undefined;
};

/** Whether the client takes a JSON answer (the Accept list names application/json). */
const acceptsJson = (headers: Record<string, unknown>) =>
  /(^|,)\s*application\/json\s*(;|,|$)/i.test(String(headers.accept ?? ''));
const acceptsEventStream = (headers: Record<string, unknown>) =>
  /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(String(headers.accept ?? ''));

/** Keys a hot request's params may have on the direct path: anything else is the SDK's to judge. */
const PARAM_KEYS = {
  'tools/call': new Set(['name', 'arguments', '_meta']),
  'tools/list': new Set(['cursor', '_meta']),
} as const;

/**
 * A tools/call or tools/list whose shape the SDK's schemas accept for certain (a JSON-RPC
 * request, an integer or string id, the params the method defines and no others), asking for
 * nothing that streams: no progress token. Anything else returns null and goes the SDK's way,
 * which answers it, or refuses it in the SDK's words.
 */
function hotRequest(body: unknown): Hot | null {
  if (!isObject(body) || body.jsonrpc !== '2.0') return null;
  const { id, method, params } = body;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  if (method !== 'tools/call' && method !== 'tools/list') return null;
  if (!isObject(params)) return null;
  for (const key of Object.keys(params)) if (!PARAM_KEYS[method].has(key)) return null;
  if (params._meta !== undefined && (!isObject(params._meta) || params._meta[PROGRESS_TOKEN] !== undefined))
    return null;
  if (method === 'tools/call') {
    if (typeof params.name !== 'string') return null;
    if (params.arguments !== undefined && !isObject(params.arguments)) return null;
  } else if (params.cursor !== undefined && typeof params.cursor !== 'string') return null;
  return { id: id as string | number, method, params };
}

/** Capabilities under which the upstream could ask the client something mid-call: those calls stream. */
const asksMidCall = (capabilities: unknown) =>
  isObject(capabilities) && (capabilities.sampling !== undefined || capabilities.elicitation !== undefined);

/**
 * The 2026-07-28 result encoding the SDK applies (its encode contract): a `resultType`, the
 * cache fields of a cacheable result (tools/list: not cached, private), and the server's
 * identity in `_meta` unless the result already names one.
 */
function encodeModern(method: Hot['method'], result: Json): Json {
  const out: Json = result.resultType === undefined ? { ...result, resultType: 'complete' } : { ...result };
  if (method === 'tools/list') {
    if (!(Number.isSafeInteger(out.ttlMs) && (out.ttlMs as number) >= 0)) out.ttlMs = 0;
    if (out.cacheScope !== 'public' && out.cacheScope !== 'private') out.cacheScope = 'private';
  }
  const meta = out._meta;
  if (meta === undefined) out._meta = { [SERVER_INFO_META_KEY]: SERVER_INFO };
  else if (isObject(meta) && meta[SERVER_INFO_META_KEY] === undefined)
    out._meta = { ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO };
  return out;
}

/** What the direct path answers: one JSON-RPC response, or a finished event stream that ends with it. */
export interface DirectReply {
  type: 'application/json' | 'text/event-stream';
  body: string;
  /** The JSON-RPC response the body ends with (its MCP span's outcome, spans.ts). */
  answer: Json;
}

const response = (id: Hot['id'], result: Json) => ({ jsonrpc: '2.0', id, result });
const failure = (id: Hot['id'], code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });

/** A log message an upstream sent during a call, for the session's client. */
interface LogMessage {
  level: string;
  data: unknown;
  logger?: string;
}

/** The answer alone as JSON; after log messages, all of them and then the answer as one event stream. */
function reply(message: Json, logs: LogMessage[]): DirectReply {
  if (logs.length === 0) return { type: 'application/json', body: JSON.stringify(message), answer: message };
  const event = (m: Json) => `event: message\ndata: ${JSON.stringify(m)}\n\n`;
  const notes = logs.map((params) => event({ jsonrpc: '2.0', method: 'notifications/message', params }));
  return { type: 'text/event-stream', body: `${notes.join('')}${event(message)}`, answer: message };
}

type ToolListing = (caller: McpCaller, cursor: string | undefined) => Promise<Json>;

/**
 * The gateway's direct path (docs/mcp.md, Performance): tools/list and tools/call that need
 * nothing but their result are answered here, as one JSON-RPC response in application/json,
 * with the same tools, calls, audit and results as the SDK's path, without building the SDK's
 * server and transport for the request, parsing the message through its schemas again, or
 * framing a single answer as an event stream. A call whose client may be asked something
 * mid-call (sampling, elicitation), that asked for progress or log messages, or that the
 * direct path does not recognise for certain goes the SDK's way, as before.
 */
export function createDirectAnswers(deps: { list: ToolListing; calls: ToolCalls; logger: Logger }) {
  const { list, calls, logger } = deps;

  async function serve(hot: Hot, caller: McpCaller, era: Era, relay?: McpRelay): Promise<Json> {
    const encode = (result: Json) => (era === 'modern' ? encodeModern(hot.method, result) : result);
    try {
      if (hot.method === 'tools/list') {
        const cursor = hot.params.cursor as string | undefined;
        return response(hot.id, encode(await list(caller, cursor)));
      }
      const name = hot.params.name as string;
      const input = (hot.params.arguments ?? {}) as Json;
      const called = await calls.call(caller, name, input, relay);
      if (!called) return failure(hot.id, -32602, await calls.unknownToolMessage(caller, name));
      return response(hot.id, encode(called.result));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'VALIDATION_FAILED') return failure(hot.id, -32602, err.message);
      // What the SDK answers a handler's failure with: an internal error (its message only when ours).
      if (!(err instanceof DomainError)) logger.error('mcp request failed', { method: hot.method, err: err as Error });
      return failure(hot.id, -32603, err instanceof DomainError ? err.message : 'Internal error');
    }
  }

  return {
    /**
     * A stateless 2026-07-28 request answered directly, or null for the SDK's path. Only what
     * the SDK would serve as is: a request it classifies as modern with a valid envelope, the
     * MCP headers equal to the body (no encoded Mcp-Name), no log level, no mid-call asks.
     */
    async modern(sdk: ServerSdk, headers: Record<string, unknown>, body: unknown, caller: McpCaller) {
      const hot = hotRequest(body);
      if (!hot || !acceptsJson(headers)) return null;
      const version = headerOf(headers, 'mcp-protocol-version');
      const methodHeader = headerOf(headers, 'mcp-method');
      const nameHeader = headerOf(headers, 'mcp-name');
      if (version !== MODERN || methodHeader !== hot.method) return null;
      if (hot.method === 'tools/call' ? nameHeader !== hot.params.name : nameHeader !== undefined) return null;
      const meta = hot.params._meta as Json | undefined;
      if (!meta || meta[LOG_LEVEL_META_KEY] !== undefined || asksMidCall(meta[CLIENT_CAPABILITIES_META_KEY]))
        return null;
      const route = sdk.classifyInboundRequest({
        httpMethod: 'POST',
        protocolVersionHeader: version,
        mcpMethodHeader: methodHeader,
        ...(nameHeader !== undefined ? { mcpNameHeader: nameHeader } : {}),
        body,
      });
      if (route.kind !== 'modern' || route.messageKind !== 'request' || route.classification.revision !== MODERN)
        return null;
      return reply(await serve(hot, caller, 'modern'), []);
    },

    /**
     * A request inside a 2025-11-25 session (already found, and the caller's) answered directly,
     * or null for the session's transport: what that transport would serve as is (a client that
     * accepts both JSON and an event stream, a supported MCP-Protocol-Version or none, no
     * per-request envelope), from a client that declared neither sampling nor elicitation.
     *
     * The session relays an upstream's log messages, filtered by its logging/setLevel as the SDK
     * filters them; here they come with the answer, in one finished event stream, rather than
     * as they are sent (a client that wants to hear of a call as it goes asks for progress,
     * which the transport serves).
     */
    async legacy(
      sdk: ServerSdk,
      session: { server: SessionServer; logLevel: string | undefined },
      headers: Record<string, unknown>,
      body: unknown,
      caller: McpCaller,
    ): Promise<DirectReply | null> {
      const hot = hotRequest(body);
      if (!hot || !acceptsJson(headers) || !acceptsEventStream(headers)) return null;
      const version = headerOf(headers, 'mcp-protocol-version');
      if (version !== undefined && (version >= MODERN || !sdk.SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
        return null;
      const meta = hot.params._meta as Json | undefined;
      if (meta?.[PROTOCOL_VERSION_META_KEY] !== undefined) return null;
      if (asksMidCall(session.server.getClientCapabilities())) return null;
      // Below the level the client set with logging/setLevel: dropped, as the SDK drops them.
      const floor = session.logLevel === undefined ? 0 : LOG_LEVELS.indexOf(session.logLevel);
      const logs: LogMessage[] = [];
      const relay: McpRelay = {
        onLog: (level, data, logger) => {
          if (LOG_LEVELS.indexOf(level) >= floor)
            logs.push({ level, data, ...(logger !== undefined ? { logger } : {}) });
        },
      };
      return reply(await serve(hot, caller, 'legacy', relay), logs);
    },
  };
}
