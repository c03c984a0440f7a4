import type { AuthInfo } from '@modelcontextprotocol/server';
import type { WorkspaceContext } from '../accounts/access.js';
import type { Clock } from '../lib/clock.js';
import { randomToken } from '../lib/crypto.js';
import type { McpCaller } from './caller.js';
import { LOG_LEVELS } from './direct.js';
import { RESUME_RETRY_MS, sessionEventStore } from './event-store.js';
import type { ServerFactory } from './mcp-server.js';
import type { ServerSdk } from './types.js';

/** A session unused this long is closed (its GET stream, if any, with it). */
const IDLE_MS = 30 * 60_000;
/** Sessions per user, whatever client or workspace opened them (docs/mcp.md, Protocol eras). */
const MAX_SESSIONS_PER_USER = 16;

type Transport = InstanceType<ServerSdk['WebStandardStreamableHTTPServerTransport']>;

interface Session {
  transport: Transport;
  server: ReturnType<ServerFactory>;
  /** Whose it is: the caps count per user. */
  userId: string;
  /** Who opened it: a later request must come from the same user, client and workspace. */
  owner: string;
  ws: WorkspaceContext;
  /** The workspace's tools as last seen (tools.ts, fingerprint), to tell a real change from a no-op. */
  fingerprint: Promise<string | null>;
  lastUsed: number;
  /** The level the client last set with logging/setLevel (the SDK keeps its own; direct.ts reads this one). */
  logLevel: string | undefined;
}

const ownerOf = (caller: McpCaller) => `${caller.principal.userId}\n${caller.token.clientId}\n${caller.ws.workspaceId}`;

/** The level of a logging/setLevel request the SDK will accept, else undefined. */
function setLevelOf(body: unknown): string | undefined {
  const message = body as { method?: unknown; params?: { level?: unknown } } | undefined;
  if (message?.method !== 'logging/setLevel') return undefined;
  const level = message.params?.level;
  return typeof level === 'string' && LOG_LEVELS.includes(level) ? level : undefined;
}

/** The SDK transport's stream id for a session's GET stream; the event store prefixes event ids with it (event-store.ts). */
const STANDALONE_STREAM_ID = '_GET_stream';

/** Whether a GET opens (or resumes) the session's standalone stream, not a POST's stream being resumed. */
function opensStandaloneStream(request: Request): boolean {
  const lastEventId = request.headers.get('last-event-id');
  return lastEventId === null || lastEventId.startsWith(`${STANDALONE_STREAM_ID}:`);
}

/** A JSON-RPC error answer outside any session (the shape the SDK's transport uses). */
const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });

/**
 * The 2025-11-25 era (docs/mcp.md, Protocol eras): `initialize` opens a session (Mcp-Session-Id),
 * later requests, the GET stream and DELETE name it. Sessions live in this process, bound to the
 * user, client and workspace that opened them (anyone else gets 404, as for an unknown id).
 *
 * Caps, by last use: a user keeps `MAX_SESSIONS_PER_USER` over all their clients and workspaces,
 * the process `maxSessions`. A full process takes room from the opener's own sessions only, never
 * another user's; an opener with none is refused (503). Both maps are kept in least recently used
 * order (a use moves the session to the end), so a request and an eviction cost O(1), and idle
 * sessions are found at the front.
 */
export function createLegacySessions(
  sdk: ServerSdk,
  factory: ServerFactory,
  clock: Clock,
  fingerprint: (ws: WorkspaceContext) => Promise<string | null>,
  maxSessions: number,
) {
  const sessions = new Map<string, Session>();
  const byUser = new Map<string, Map<string, Session>>();

  function drop(id: string): void {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    const mine = byUser.get(session.userId);
    mine?.delete(id);
    if (mine?.size === 0) byUser.delete(session.userId);
    void session.transport.close().catch(() => undefined);
    void session.server.close().catch(() => undefined);
  }

  /** Moves a session to the most recently used end of both maps. */
  function touch(id: string, session: Session): void {
    session.lastUsed = clock.now().getTime();
    sessions.delete(id);
    sessions.set(id, session);
    const mine = byUser.get(session.userId)!;
    mine.delete(id);
    mine.set(id, session);
  }

  /** Idle sessions out: they are at the front, so this stops at the first one still in use. */
  function closeIdle(now: number): void {
    for (const [id, session] of sessions) {
      if (now - session.lastUsed <= IDLE_MS) break;
      drop(id);
    }
  }

  const dropOldest = (mine: Map<string, Session>) => drop(mine.keys().next().value!);

  /**
   * Room for one more session of `userId`: their least recently used goes while they are at
   * their cap or the process at its own. False when the process is full and none of it is theirs.
   */
  function makeRoom(userId: string): boolean {
    const mine = byUser.get(userId);
    while (mine && mine.size > 0 && (mine.size >= MAX_SESSIONS_PER_USER || sessions.size >= maxSessions))
      dropOldest(mine);
    return sessions.size < maxSessions;
  }

  /** 503 with the seconds until the least recently used session goes idle (the earliest a place frees by itself). */
  function busy(now: number): Response {
    const oldest = sessions.values().next().value;
    const wait = oldest ? Math.ceil((IDLE_MS - (now - oldest.lastUsed)) / 1000) : 1;
    return rpcError(503, -32000, 'Server busy: too many MCP sessions are open on this server; try again later', {
      'Retry-After': String(Math.max(1, wait)),
    });
  }

  async function open(request: Request, parsedBody: unknown, caller: McpCaller, authInfo: AuthInfo) {
    const now = clock.now().getTime();
    closeIdle(now);
    const { userId } = caller.principal;
    if (!makeRoom(userId)) return busy(now);
    const server = factory({ era: 'legacy' });
    // The id is chosen here and the session counted at once, not when the SDK reports it
    // opened: should the initialize ever wait on I/O, another one cannot take the same place.
    const id = randomToken(24);
    let opened = false;
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      // Resumable streams: priming events with an id and `retry:`, replay after Last-Event-ID.
      eventStore: sessionEventStore(),
      retryInterval: RESUME_RETRY_MS,
      onsessioninitialized: () => {
        opened = true;
      },
      onsessionclosed: (closed) => drop(closed),
    });
    const session: Session = {
      transport,
      server,
      userId,
      owner: ownerOf(caller),
      ws: caller.ws,
      fingerprint: fingerprint(caller.ws),
      lastUsed: now,
      logLevel: undefined,
    };
    sessions.set(id, session);
    if (!byUser.has(userId)) byUser.set(userId, new Map());
    byUser.get(userId)!.set(id, session);
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, { parsedBody, authInfo });
    } finally {
      // A failed initialize opened nothing: nothing to keep.
      if (!opened) drop(id);
    }
  }

  return {
    async handle(request: Request, parsedBody: unknown, caller: McpCaller, authInfo: AuthInfo): Promise<Response> {
      const id = request.headers.get('mcp-session-id');
      if (id === null) {
        if (request.method === 'POST' && sdk.isInitializeRequest(parsedBody))
          return open(request, parsedBody, caller, authInfo);
        return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required (initialize first)');
      }
      closeIdle(clock.now().getTime());
      const session = sessions.get(id);
      if (!session || session.owner !== ownerOf(caller)) return rpcError(404, -32001, 'Session not found');
      touch(id, session);
      const level = setLevelOf(parsedBody);
      if (level !== undefined) session.logLevel = level;
      // A GET for the session's stream while one is open (the client reconnected before this
      // side saw the old one close) takes it over: the SDK's transport would answer 409, where
      // the 2025-11-25 transport lets a client open streams as it likes (docs/mcp.md, The GET stream).
      if (request.method === 'GET' && opensStandaloneStream(request)) session.transport.closeStandaloneSSEStream();
      return session.transport.handleRequest(request, { parsedBody, authInfo });
    },

    /**
     * The session a request names, when it is the caller's (counted as a use); null otherwise,
     * which the transport's way (`handle`) answers 404.
     */
    find(id: string, caller: McpCaller): Pick<Session, 'server' | 'logLevel'> | null {
      closeIdle(clock.now().getTime());
      const session = sessions.get(id);
      if (!session || session.owner !== ownerOf(caller)) return null;
      touch(id, session);
      return session;
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
