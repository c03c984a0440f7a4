import type { IncomingHttpHeaders } from 'node:http';
import { OUTBOUND_TIMEOUT_MS } from '../lib/outbound.js';
import { bodyChunks, type GuardedResponse, guardedRequest } from '../lib/outbound-request.js';
import type { Tracing } from '../lib/tracing.js';
import { callMcpTool, CLIENT_INFO, type McpSession, type McpTarget } from './mcp.js';
import type { McpRelay } from './types.js';

/** Resuming the call's event stream: attempts in a row, and the waits (as mcp.ts sets the SDK's). */
const RESUME_MAX_ATTEMPTS = 3;
const RESUME_FIRST_DELAY_MS = 100;
const RESUME_MAX_DELAY_MS = 1_000;
/** A server's own `retry:` is honoured up to this (docs/connectors.md, Stream resumption). */
const RESUME_DELAY_CAP_MS = 5_000;

/**
 * Tool names the SDK's client sends as they are in the Mcp-Name header (others it encodes):
 * only these go the direct way, the SDK's client sends the rest.
 */
const PLAIN_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

type Json = Record<string, unknown>;
type ClientSdk = typeof import('@modelcontextprotocol/client');

let nextId = 0;

/** One server-sent event: its id, retry and data fields. */
interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

/** Events of an event stream as they complete (the WHATWG parsing of id, retry and data lines). */
async function* events(res: GuardedResponse): AsyncGenerator<SseEvent> {
  let buffer = '';
  let event: SseEvent = { data: '' };
  let hasData = false;
  for await (const chunk of bodyChunks(res)) {
    buffer += chunk.toString('utf8');
    let end = buffer.search(/\r\n|\r|\n/);
    while (end >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1);
      if (line === '') {
        if (hasData || event.id !== undefined) yield event;
        event = { data: '' };
        hasData = false;
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
        if (field === 'data') {
          event.data = hasData ? `${event.data}\n${value}` : value;
          hasData = true;
        } else if (field === 'id' && !value.includes('\0')) event.id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) event.retry = Number(value);
      }
      end = buffer.search(/\r\n|\r|\n/);
    }
  }
}

async function text(res: GuardedResponse): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of bodyChunks(res)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const mediaType = (headers: IncomingHttpHeaders) =>
  String(headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();

/** Whether a tool call on this session may go the direct way (callToolDirectly). */
export const callsDirectly = (session: McpSession, name: string) =>
  PLAIN_NAME.test(name) && (session.era === 'modern' || session.sessionId() !== undefined);

/**
 * A tool call on a shared session (mcp-sessions.ts) without the SDK client's per-request
 * machinery (docs/mcp.md, Performance): one POST with the headers and `_meta` the client would
 * send for the session's revision, the answer read as JSON or as the call's event stream
 * (progress to the relay; a request of the server's answered "method not found", as the
 * client answers what it has no handler for; the stream resumed from its last event id when
 * it ends early), and the same errors the SDK's client raises, so that refusals (401, 403
 * insufficient_scope, a 2025 session gone) are told apart as before. The SDK's client still
 * opens and probes the session, and makes every other call (mcp.ts). With tracing on, the
 * active span's `traceparent` and `tracestate` go in the HTTP headers and in `params._meta`, as
 * the SDK's client path sends them (mcp.ts, callMcpTool and tracedFetch).
 */
export async function callToolDirectly(
  session: McpSession,
  target: McpTarget,
  name: string,
  args: Json,
  relay?: McpRelay,
  tracing?: Tracing,
): Promise<unknown> {
  const sdk: ClientSdk = await import('@modelcontextprotocol/client');
  const id = `gantry-${++nextId}`;
  const onProgress = relay?.onProgress;
  const modern = session.era === 'modern';
  // Unprefixed keys, in _meta as in the headers (SEP-414; docs/operations.md, Traces).
  const trace: Record<string, string> = {};
  if (tracing?.enabled) tracing.inject(trace);
  const meta: Json = {
    ...(modern
      ? {
          [sdk.PROTOCOL_VERSION_META_KEY]: session.protocolVersion,
          [sdk.CLIENT_INFO_META_KEY]: CLIENT_INFO,
          [sdk.CLIENT_CAPABILITIES_META_KEY]: {},
        }
      : {}),
    ...(onProgress ? { progressToken: id } : {}),
    ...trace,
  };
  const params = { name, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
  const sessionId = session.sessionId();
  // What every request of the call carries: the POST, and a GET that resumes its stream.
  const sessionHeaders: Record<string, string> = {
    ...target.headers,
    ...trace,
    'mcp-protocol-version': session.protocolVersion,
    ...(sessionId !== undefined ? { 'mcp-session-id': sessionId } : {}),
  };
  const headers = { ...sessionHeaders, ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': name } : {}) };
  const options = { allowPrivate: target.allowPrivate, timeoutMs: OUTBOUND_TIMEOUT_MS };
  const post = (message: Json) =>
    guardedRequest(
      target.url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(message),
      },
      options,
    );

  /** The call's answer as the client returns it: the result, or the error it throws. */
  const settle = (message: Json): unknown => {
    if (message.error !== undefined) {
      const error = message.error as { code?: unknown; message?: unknown; data?: unknown };
      throw new sdk.ProtocolError(Number(error.code), String(error.message ?? 'MCP error'), error.data);
    }
    const result = message.result as Json;
    if (typeof result !== 'object' || result === null || Array.isArray(result) || !Array.isArray(result.content ?? []))
      throw new sdk.SdkError(sdk.SdkErrorCode.InvalidResult, 'Invalid result for tools/call');
    if (!modern) return result;
    // 2026-07-28: `complete` is decoded away; an input_required answer needs handlers a shared session has none of.
    const { resultType, ...rest } = result;
    if (resultType !== undefined && resultType !== 'complete')
      throw new sdk.SdkError(
        sdk.SdkErrorCode.UnsupportedResultType,
        `Unsupported result type '${String(resultType)}' for tools/call`,
      );
    return rest;
  };

  /** Reads the call's event stream; the answer, or the last event id to resume from. */
  const readStream = async (
    res: GuardedResponse,
  ): Promise<{ answer: Json } | { resumeFrom?: string; retry?: number }> => {
    let resumeFrom: string | undefined;
    let retry: number | undefined;
    for await (const event of events(res)) {
      if (event.id !== undefined) resumeFrom = event.id;
      if (event.retry !== undefined) retry = event.retry;
      if (event.data === '') continue;
      const message = JSON.parse(event.data) as Json;
      if (message.id === id && message.method === undefined) return { answer: message };
      if (message.method === 'notifications/progress') {
        const p = message.params as { progressToken?: unknown; progress: number; total?: number; message?: string };
        if (onProgress && p?.progressToken === id) onProgress(p.progress, p.total, p.message);
      } else if (message.method !== undefined && message.id !== undefined) {
        // A request of the server's (sampling, elicitation, roots): a shared session has no handler for it.
        void post({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: sdk.ProtocolErrorCode.MethodNotFound, message: 'Method not found' },
        })
          .then((r) => r.resume())
          .catch(() => undefined);
      }
    }
    return { resumeFrom, retry };
  };

  const res = await post({ jsonrpc: '2.0', id, method: 'tools/call', params });
  const status = res.statusCode ?? 502;
  if (status < 200 || status >= 300) {
    const body = await text(res).catch(() => null);
    const www = res.headers['www-authenticate'];
    if (status === 403 && www) {
      const challenge = sdk.extractWWWAuthenticateParams({
        headers: new Headers({ 'www-authenticate': www }),
      } as Response);
      if (challenge.error === 'insufficient_scope')
        throw new sdk.InsufficientScopeError({
          requiredScope: challenge.scope,
          resourceMetadataUrl: challenge.resourceMetadataUrl,
          errorDescription: challenge.errorDescription,
        });
    }
    // A 2026-07-28 server refuses a request with a JSON-RPC error under a 400: that error is the answer.
    if (status === 400 && modern && body) {
      let parsed: Json | null = null;
      try {
        parsed = JSON.parse(body) as Json;
      } catch {
        // Not JSON-RPC: the HTTP error below.
      }
      if (parsed?.id === id && parsed.error !== undefined) return settle(parsed);
    }
    // The code the SDK's Streamable HTTP client gives any refused POST (its name is the SDK's),
    // so callers tell this failure apart exactly as they do the client's (mcp-sessions.ts).
    throw new sdk.SdkHttpError(sdk.SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${body}`, {
      status,
      statusText: res.statusMessage ?? '',
      text: body ?? undefined,
    });
  }
  if (mediaType(res.headers) === 'application/json') return settle(JSON.parse(await text(res)) as Json);
  if (mediaType(res.headers) !== 'text/event-stream') {
    res.resume();
    throw new sdk.SdkError(
      sdk.SdkErrorCode.ClientHttpUnexpectedContent,
      `Unexpected content type: ${String(res.headers['content-type'])}`,
    );
  }
  let read = await readStream(res);
  for (let attempt = 0; !('answer' in read); attempt++) {
    if (read.resumeFrom === undefined || attempt >= RESUME_MAX_ATTEMPTS)
      throw new sdk.SdkError(sdk.SdkErrorCode.ConnectionClosed, 'The MCP server ended the call without an answer');
    const delay = read.retry ?? Math.min(RESUME_FIRST_DELAY_MS * 1.5 ** attempt, RESUME_MAX_DELAY_MS);
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, RESUME_DELAY_CAP_MS)));
    const resumed = await guardedRequest(
      target.url,
      {
        method: 'GET',
        headers: { ...sessionHeaders, accept: 'text/event-stream', 'last-event-id': read.resumeFrom },
      },
      options,
    );
    if ((resumed.statusCode ?? 502) !== 200) {
      resumed.resume();
      throw new sdk.SdkError(sdk.SdkErrorCode.ConnectionClosed, 'The MCP server ended the call without an answer');
    }
    const before: string = read.resumeFrom;
    read = await readStream(resumed);
    if (!('answer' in read) && read.resumeFrom === undefined) read = { ...read, resumeFrom: before };
  }
  return settle(read.answer);
}

/** A tool call on a shared session: the direct way when it can go so, else the SDK's client. */
export function callOnShared(
  session: McpSession,
  target: McpTarget,
  name: string,
  args: Json,
  relay?: McpRelay,
  tracing?: Tracing,
) {
  return callsDirectly(session, name)
    ? callToolDirectly(session, target, name, args, relay, tracing)
    : callMcpTool(session, name, args, relay, tracing);
}
