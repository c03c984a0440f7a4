import type { AuthInfo } from '@modelcontextprotocol/server';
import type { WorkspaceContext } from '../accounts/access.js';
import type { Clock } from '../lib/clock.js';
import { randomToken } from '../lib/crypto.js';
import type { McpCaller } from './caller.js';
import { RESUME_RETRY_MS, sessionEventStore } from './event-store.js';
import type { ServerFactory, ServerSdk } from './mcp-server.js';

/** A session unused this long is closed (its GET stream, if any, with it). */
const IDLE_MS = 30 * 60_000;
/** Sessions per user (the oldest goes first) and in all. */
const MAX_PER_USER = 16;
const MAX_SESSIONS = 2_000;

type Transport = InstanceType<ServerSdk['WebStandardStreamableHTTPServerTransport']>;

interface Session {
  transport: Transport;
  server: ReturnType<ServerFactory>;
  /** Who opened it: a later request must come from the same user, client and workspace. */
  owner: string;
  ws: WorkspaceContext;
  /** The workspace's tools as last seen (tools.ts, fingerprint), to tell a real change from a no-op. */
  fingerprint: Promise<string | null>;
  lastUsed: number;
}

const ownerOf = (caller: McpCaller) => `${caller.principal.userId}\n${caller.token.clientId}\n${caller.ws.workspaceId}`;

/** A JSON-RPC error answer outside any session (the shape the SDK's transport uses). */
const rpcError = (status: number, code: number, message: string) =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });

/**
 * The 2025-11-25 era (docs/mcp.md, Protocol eras): `initialize` opens a session (Mcp-Session-Id),
 * later requests, the GET stream and DELETE name it. Sessions live in this process, bound to the
 * user, client and workspace that opened them (anyone else gets 404, as for an unknown id).
 */
export function createLegacySessions(
  sdk: ServerSdk,
  factory: ServerFactory,
  clock: Clock,
  fingerprint: (ws: WorkspaceContext) => Promise<string | null>,
) {
  const sessions = new Map<string, Session>();

  function drop(id: string): void {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    void session.transport.close().catch(() => undefined);
    void session.server.close().catch(() => undefined);
  }

  /** Idle sessions out; then room for one more of this owner and in all (oldest first: Map order). */
  function makeRoom(owner: string): void {
    const now = clock.now().getTime();
    for (const [id, s] of sessions) if (now - s.lastUsed > IDLE_MS) drop(id);
    const mine = [...sessions].filter(([, s]) => s.owner === owner);
    for (const [id] of mine.slice(0, Math.max(0, mine.length - MAX_PER_USER + 1))) drop(id);
    for (const [id] of [...sessions].slice(0, Math.max(0, sessions.size - MAX_SESSIONS + 1))) drop(id);
  }

  async function open(request: Request, parsedBody: unknown, caller: McpCaller, authInfo: AuthInfo) {
    const owner = ownerOf(caller);
    makeRoom(owner);
    const server = factory({ era: 'legacy' });
    let opened: string | null = null;
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomToken(24),
      // Resumable streams: priming events with an id and `retry:`, replay after Last-Event-ID.
      eventStore: sessionEventStore(),
      retryInterval: RESUME_RETRY_MS,
      onsessioninitialized: (id) => {
        opened = id;
        sessions.set(id, {
          transport,
          server,
          owner,
          ws: caller.ws,
          fingerprint: fingerprint(caller.ws),
          lastUsed: clock.now().getTime(),
        });
      },
      onsessionclosed: (id) => drop(id),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody, authInfo });
    // A failed initialize opened nothing: nothing to keep.
    if (opened === null) {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    }
    return response;
  }

  return {
    async handle(request: Request, parsedBody: unknown, caller: McpCaller, authInfo: AuthInfo): Promise<Response> {
      const id = request.headers.get('mcp-session-id');
      if (id === null) {
        if (request.method === 'POST' && sdk.isInitializeRequest(parsedBody))
          return open(request, parsedBody, caller, authInfo);
        return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required (initialize first)');
      }
      const session = sessions.get(id);
      if (!session || session.owner !== ownerOf(caller)) return rpcError(404, -32001, 'Session not found');
      session.lastUsed = clock.now().getTime();
      return session.transport.handleRequest(request, { parsedBody, authInfo });
    },

    /**
     * The workspace's tools may have changed: its sessions whose list did change get
     * notifications/tools/list_changed (on their GET stream; without one it is dropped).
     */
    async toolsChanged(workspaceId: string): Promise<void> {
      const mine = [...sessions.values()].filter((s) => s.ws.workspaceId === workspaceId);
      if (mine.length === 0) return;
      const now = await fingerprint(mine[0].ws);
      for (const session of mine) {
        const before = await session.fingerprint;
        session.fingerprint = Promise.resolve(now);
        if (before !== now) await session.server.sendToolListChanged().catch(() => undefined);
      }
    },

    closeAll(): void {
      for (const id of [...sessions.keys()]) drop(id);
    },
  };
}
