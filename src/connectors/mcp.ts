import type { Client, PriorDiscovery } from '@modelcontextprotocol/client';
import { INTERACTIVE_CALL_MS, type McpRelay } from './types.js';
import { guardedFetch, OUTBOUND_TIMEOUT_MS } from '../lib/outbound.js';
import type { Tracing } from '../lib/tracing.js';

/** Stop following nextCursor after this many pages (a server could page forever). */
const MCP_PAGE_CAP = 50;

export interface McpTarget {
  url: string;
  headers: Record<string, string>;
  allowPrivate: boolean;
}

export interface McpToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** Resuming an upstream's SSE stream: attempts in a row, and the longest wait before one. */
const RESUME_MAX_ATTEMPTS = 3;
const RESUME_MAX_DELAY_MS = 5_000;

/** The server answered 401 (docs/connectors.md, Authorization of remote MCP servers): its challenge, if any. */
export class McpAuthRequired extends Error {
  constructor(readonly challenge: string | null) {
    super('the MCP server requires authorization');
  }
}

/**
 * What an upstream's refusal asks for (docs/connectors.md, Re-authorization): `token` for a 401
 * (at connect or on a later request), `scope` with the challenge's scopes for a 403
 * `insufficient_scope` (the SDK raises InsufficientScopeError, having no auth provider here).
 */
export function authRefusal(err: unknown): { kind: 'token' } | { kind: 'scope'; scopes: string[] } | null {
  if (err instanceof McpAuthRequired) return { kind: 'token' };
  const e = err as { constructor?: { mcpBrand?: unknown }; requiredScope?: unknown; data?: { status?: unknown } };
  if (e?.constructor?.mcpBrand === 'mcp.InsufficientScopeError')
    return {
      kind: 'scope',
      scopes: String(e.requiredScope ?? '')
        .split(' ')
        .filter(Boolean),
    };
  if (e?.data?.status === 401) return { kind: 'token' };
  return null;
}

const interactive = (relay?: McpRelay) => Boolean(relay?.sampling || relay?.elicitation);

/**
 * A relay that needs the session to itself: the client's handlers for log messages and
 * server-to-client requests are session-wide, so only a call lending none of them may share
 * one (progress is per request). See mcp-sessions.ts.
 *
 * Log messages are the exception at a 2026-07-28 server (`prior` modern): it sends them only
 * to a request that names a log level in its `_meta`, and Gantry's requests name none, so a
 * relay's log handler would never be called there; sharing loses nothing.
 */
export const needsOwnSession = (relay?: McpRelay, prior?: PriorDiscovery) =>
  interactive(relay) || (Boolean(relay?.onLog) && prior?.kind !== 'modern');

/** How Gantry names itself to MCP servers. */
export const CLIENT_INFO = Object.freeze({ name: 'gantry', version: '0.1.0' });

export interface McpSession {
  /** The negotiated revision: 2026-07-28 (modern, stateless) or a 2025-era one. */
  protocolVersion: string;
  era: 'modern' | 'legacy';
  client: Client;
  /** A 2025-era session's Mcp-Session-Id (none for a 2026-07-28 server, nor a 2025 one that keeps no sessions). */
  sessionId(): string | undefined;
  /** The era verdict, to connect to the same target without probing again. */
  prior: PriorDiscovery;
}

export interface OpenOptions {
  /** The target's era as a previous session found it: a modern one connects with no round trip. */
  prior?: PriorDiscovery;
  /** A session calls of many callers share: it opens no standalone GET stream. */
  shared?: boolean;
  /** Each HTTP request carries the trace context of the span active when it is sent (tracedFetch). */
  tracing?: Tracing;
}

/**
 * Opens an MCP session over Streamable HTTP with the 2.x client in negotiation mode 'auto':
 * it probes with server/discover (2026-07-28, stateless, Mcp-Method headers) and falls back
 * to the 2025-11-25 initialize handshake (Mcp-Session-Id) when the server is of that era.
 * (@modelcontextprotocol/sdk 1.x speaks only the 2025 revisions, so it is not used here.)
 */
export async function openMcp(target: McpTarget, relay?: McpRelay, options: OpenOptions = {}): Promise<McpSession> {
  // Loaded on first use: the SDK builds its whole schema set at import, megabytes an appliance
  // without MCP connectors would carry for nothing.
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const client = new Client(
    { ...CLIENT_INFO },
    {
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: OUTBOUND_TIMEOUT_MS } },
      capabilities: {
        ...(relay?.sampling ? { sampling: relay.sampling.capability } : {}),
        ...(relay?.elicitation ? { elicitation: relay.elicitation.capability } : {}),
      },
    },
  );
  if (relay) relayTo(client, relay);
  // The last 401's WWW-Authenticate: a connect that fails after one needs authorization.
  let challenge: string | null | undefined;
  const base = guardedFetch({
    allowPrivate: target.allowPrivate,
    ...(interactive(relay) ? { timeoutMs: INTERACTIVE_CALL_MS } : {}),
  });
  const watched: Fetch = async (input, init) => {
    const res = await base(input, init);
    if (res.status === 401) challenge = res.headers.get('www-authenticate');
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    // The deadline covers a response's streamed body: a call that may wait on the caller needs longer.
    fetch: tracedFetch(withoutStream(watched, options.shared === true), options.tracing),
    // The resumed GET (Last-Event-ID) goes through the same fetch and carries these headers too.
    requestInit: { headers: target.headers },
    // Gantry cannot open a browser mid-call: a step-up is the member's (authRefusal).
    onInsufficientScope: 'throw',
    // An upstream may close a call's SSE stream and answer once the client resumes it
    // (docs/connectors.md, Stream resumption): a few attempts, at the delay the server asks for
    // (`retry:`), or backing off from 100 ms, never more than RESUME_MAX_DELAY_MS.
    reconnectionOptions: {
      maxReconnectionDelay: 1000,
      initialReconnectionDelay: 100,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: RESUME_MAX_ATTEMPTS,
    },
    reconnectionScheduler: (reconnect, delay) => {
      const timer = setTimeout(reconnect, Math.min(delay, RESUME_MAX_DELAY_MS));
      return () => clearTimeout(timer);
    },
  });
  try {
    await client.connect(transport, {
      timeout: OUTBOUND_TIMEOUT_MS,
      ...(options.prior ? { prior: options.prior } : {}),
    });
  } catch (err) {
    if (challenge !== undefined) throw new McpAuthRequired(challenge);
    throw err;
  }
  const protocolVersion = client.getNegotiatedProtocolVersion() ?? 'unknown';
  const era = protocolVersion >= '2026-07-28' ? 'modern' : 'legacy';
  const discover = client.getDiscoverResult();
  return {
    client,
    sessionId: () => transport.sessionId,
    protocolVersion,
    era,
    prior: era === 'modern' && discover ? { kind: 'modern', discover } : { kind: 'legacy' },
  };
}

type Fetch = ReturnType<typeof guardedFetch>;

/**
 * A shared session's fetch: the standalone GET stream (a 2025-era server's messages outside
 * any request) is answered 405 here, as a server without one would: what it could carry
 * (logs, requests) would have no caller to go to. A GET resuming a call's stream (it names
 * Last-Event-ID) still goes out: the call's answer comes on it (docs/connectors.md, Stream
 * resumption).
 */
function withoutStream(fetch: Fetch, shared: boolean): Fetch {
  if (!shared) return fetch;
  return (input, init) =>
    (init?.method ?? 'GET').toUpperCase() === 'GET' && !new Headers(init?.headers).has('last-event-id')
      ? Promise.resolve(new Response(null, { status: 405 }))
      : fetch(input, init);
}

/**
 * A fetch that sends the W3C trace context (`traceparent`, `tracestate`) of the span active at
 * each request (docs/operations.md, Traces): read per request, not per session, since a shared
 * session carries the calls of many traces. Without tracing, the fetch itself.
 */
function tracedFetch(fetch: Fetch, tracing: Tracing | undefined): Fetch {
  if (!tracing?.enabled) return fetch;
  return (input, init) => {
    const context: Record<string, string> = {};
    tracing.inject(context);
    if (context.traceparent === undefined) return fetch(input, init);
    const headers = new Headers(init?.headers);
    for (const name in context) headers.set(name, context[name]);
    return fetch(input, { ...init, headers });
  };
}

/**
 * The upstream's log messages and server-to-client requests, handed to the relay. The same
 * handlers answer a 2026-07-28 upstream's input_required results (the SDK fulfils them and
 * retries the call), so both upstream eras are covered.
 */
function relayTo(client: Client, relay: McpRelay): void {
  const { onLog, sampling, elicitation } = relay;
  if (onLog)
    client.setNotificationHandler('notifications/message', (n) => {
      onLog(n.params.level, n.params.data, n.params.logger);
    });
  if (sampling)
    client.setRequestHandler('sampling/createMessage', async (r) => (await sampling.createMessage(r.params)) as never);
  if (elicitation)
    client.setRequestHandler('elicitation/create', async (r) => (await elicitation.elicit(r.params)) as never);
}

export async function closeMcp(session: McpSession): Promise<void> {
  await session.client.close().catch(() => undefined);
}

/**
 * Every tool of the server, walking nextCursor page by page ourselves: at most
 * MCP_PAGE_CAP pages, and a cursor seen twice ends the walk (a server looping on itself).
 */
export async function listAllTools(
  session: McpSession,
): Promise<{ tools: McpToolDefinition[]; pages: number; truncated: boolean }> {
  const tools: McpToolDefinition[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    if (pages >= MCP_PAGE_CAP) return { tools, pages, truncated: true };
    const page = (await session.client.request(
      { method: 'tools/list', params: cursor ? { cursor } : {} },
      { timeout: OUTBOUND_TIMEOUT_MS },
    )) as {
      tools?: McpToolDefinition[];
      nextCursor?: string;
    };
    pages++;
    tools.push(...(page.tools ?? []));
    const next = page.nextCursor;
    if (!next) return { tools, pages, truncated: false };
    if (seen.has(next)) return { tools, pages, truncated: true };
    seen.add(next);
    cursor = next;
  }
}

/**
 * Calls a tool. With tracing on, the request's `params._meta` carries the active span's trace
 * context too, where the MCP revision 2026-07-28 reserves it (the HTTP headers carry it as well,
 * tracedFetch), so an upstream behind another transport or proxy still joins the trace.
 */
export async function callMcpTool(
  session: McpSession,
  name: string,
  args: Record<string, unknown>,
  relay?: McpRelay,
  tracing?: Tracing,
): Promise<unknown> {
  const onProgress = relay?.onProgress;
  const params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> } = {
    name,
    arguments: args,
  };
  if (tracing?.enabled) {
    const meta: Record<string, unknown> = {};
    tracing.inject(meta);
    if (meta.traceparent !== undefined) params._meta = meta;
  }
  return session.client.request(
    { method: 'tools/call', params },
    {
      timeout: interactive(relay) ? INTERACTIVE_CALL_MS : OUTBOUND_TIMEOUT_MS,
      // Asking the upstream for progress only when the caller asked for it.
      ...(onProgress ? { onprogress: (p) => onProgress(p.progress, p.total, p.message) } : {}),
    },
  );
}

/** A liveness round trip: ping on 2025-era sessions; modern sessions re-run server/discover. */
export async function pingMcp(session: McpSession): Promise<void> {
  if (session.era === 'legacy') await session.client.ping({ timeout: OUTBOUND_TIMEOUT_MS });
  else await session.client.request({ method: 'server/discover', params: {} }, { timeout: OUTBOUND_TIMEOUT_MS });
}
