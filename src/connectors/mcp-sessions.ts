import type { PriorDiscovery } from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import type { TraceAttributes, Tracing } from '../lib/tracing.js';
import { callOnShared } from './mcp-calls.js';
import { callMcpTool, closeMcp, type McpSession, type McpTarget, needsOwnSession, openMcp } from './mcp.js';
import type { McpRelay } from './types.js';

/** A shared session unused this long is closed. */
const IDLE_MS = 5 * 60_000;
const SWEEP_MS = 30_000;
/** Shared sessions in all (one per instance; the least recently used goes first). */
const SHARED_MAX = 500;
/** Era verdicts remembered (per instance and target). */
const PRIORS_MAX = 2_000;

/** Why a call never reached the upstream's tool: the session could not be opened. */
export class McpUnreachable extends Error {
  constructor(readonly reason: unknown) {
    super((reason as Error)?.message ?? String(reason));
  }
}

interface Shared {
  key: string;
  workspaceId: string;
  session: Promise<McpSession>;
  busy: number;
  lastUsed: number;
  retired: boolean;
}

/**
 * Whose shared session a call uses: `slot` is the instance id, or the instance and user for a
 * per_user instance, whose members never share a session (each sends their own credential).
 */
interface Caller {
  id: string;
  workspace_id: string;
  slot: string;
}

/**
 * The upstream call's client span attributes (OpenTelemetry MCP semantic conventions); the
 * URL itself is not one: an instance's URL may carry a key in its query string.
 */
function upstreamAttributes(toolKey: string, url: string, shared: boolean): TraceAttributes {
  const { hostname, port, protocol } = new URL(url);
  return {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': toolKey,
    'gen_ai.operation.name': 'execute_tool',
    'server.address': hostname.replace(/^\[(.*)\]$/, '$1'),
    'server.port': port ? Number(port) : protocol === 'https:' ? 443 : 80,
    'network.transport': 'tcp',
    'network.protocol.name': 'http',
    'gantry.mcp.session': shared ? 'shared' : 'own',
  };
}

/** A 2025-era server that no longer knows the session answers 404: the call did not run there. */
const sessionGone = (err: unknown) => (err as { data?: { status?: unknown } })?.data?.status === 404;

/**
 * Upstream MCP sessions for tool calls (docs/mcp.md, Performance). A call whose relay needs
 * nothing session-wide (no log messages, sampling or elicitation: needsOwnSession) runs on the
 * instance's shared session, opened once and kept while its target (url, headers with the
 * credential) stays the same; others open a session of their own, closed after the call.
 * Either way the target's era is remembered, so no call probes it again: a 2026-07-28
 * server is called with no handshake at all.
 *
 * A shared session is retired when its target changes, when its workspace's tools change
 * (TOOLS_CHANGED_TOPIC: an instance edited, disabled or deleted), when a call on it fails, and
 * after IDLE_MS unused; it closes once its calls in flight have ended.
 */
export function createMcpSessions(clock: Clock, tracing: Tracing) {
  const shared = new Map<string, Shared>();
  const priors = new LRUCache<string, PriorDiscovery>({ max: PRIORS_MAX });
  let sweeper: NodeJS.Timeout | null = null;

  const keyOf = (instanceId: string, target: McpTarget) =>
    sha256Hex(JSON.stringify([instanceId, target.url, target.headers, target.allowPrivate]));

  function close(entry: Shared): void {
    void entry.session.then(closeMcp, () => undefined);
  }

  function retire(instanceId: string, entry: Shared): void {
    if (shared.get(instanceId) === entry) shared.delete(instanceId);
    if (entry.retired) return;
    entry.retired = true;
    if (entry.busy === 0) close(entry);
    if (shared.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = null;
    }
  }

  function sweep(): void {
    const now = clock.now().getTime();
    for (const [id, entry] of [...shared]) if (entry.busy === 0 && now - entry.lastUsed > IDLE_MS) retire(id, entry);
  }

  async function open(key: string, target: McpTarget, relay: McpRelay | undefined, isShared: boolean) {
    try {
      const session = await openMcp(target, relay, { prior: priors.get(key), shared: isShared, tracing });
      priors.set(key, session.prior);
      return session;
    } catch (err) {
      // The target may have changed era: the next call probes again.
      priors.delete(key);
      throw new McpUnreachable(err);
    }
  }

  function sharedFor(instance: Caller, key: string, target: McpTarget): Shared {
    const current = shared.get(instance.slot);
    if (current && current.key === key) {
      // Most recently used last: the first one is the one to go when full.
      shared.delete(instance.slot);
      shared.set(instance.slot, current);
      return current;
    }
    if (current) retire(instance.slot, current);
    for (const [id, entry] of shared) {
      if (shared.size < SHARED_MAX) break;
      retire(id, entry);
    }
    const entry: Shared = {
      key,
      workspaceId: instance.workspace_id,
      session: open(key, target, undefined, true),
      busy: 0,
      lastUsed: clock.now().getTime(),
      retired: false,
    };
    entry.session.then(
      (session) => {
        session.client.onclose = () => retire(instance.slot, entry);
      },
      () => retire(instance.slot, entry),
    );
    shared.set(instance.slot, entry);
    sweeper ??= setInterval(sweep, SWEEP_MS);
    sweeper.unref();
    return entry;
  }

  /**
   * The call on its session (on a shared one, `shared` is its target: the direct way when it
   * can go so, mcp-calls.ts), inside the upstream call's client span: the session's revision
   * and id are named once known, and a result the tool flagged `isError` is a `tool_error`.
   */
  async function callTraced(
    session: McpSession,
    toolKey: string,
    input: Record<string, unknown>,
    relay?: McpRelay,
    shared?: McpTarget,
  ) {
    const call = () =>
      shared
        ? callOnShared(session, shared, toolKey, input, relay, tracing)
        : callMcpTool(session, toolKey, input, relay, tracing);
    if (!tracing.enabled) return call();
    const span = tracing.activeSpan();
    span.setAttribute('mcp.protocol.version', session.protocolVersion);
    const sessionId = session.sessionId();
    if (sessionId) span.setAttribute('mcp.session.id', sessionId);
    const result = await call();
    if ((result as { isError?: unknown } | null)?.isError === true) tracing.recordError(span, 'tool_error');
    return result;
  }

  /** A call on a session of its own, closed after it. */
  async function alone(
    key: string,
    target: McpTarget,
    toolKey: string,
    input: Record<string, unknown>,
    relay?: McpRelay,
  ) {
    const session = await open(key, target, relay, false);
    try {
      return await callTraced(session, toolKey, input, relay);
    } catch (err) {
      priors.delete(key);
      throw err;
    } finally {
      await closeMcp(session);
    }
  }

  /** A call on the instance's shared session; once more on a new one if the server dropped it. */
  async function onShared(
    instance: Caller,
    key: string,
    target: McpTarget,
    call: { toolKey: string; input: Record<string, unknown>; relay?: McpRelay },
    retry: boolean,
  ): Promise<unknown> {
    const entry = sharedFor(instance, key, target);
    entry.busy++;
    try {
      return await callTraced(await entry.session, call.toolKey, call.input, call.relay, target);
    } catch (err) {
      retire(instance.slot, entry);
      // A restarted server does not know the session: the call did not run there.
      if (retry && !(err instanceof McpUnreachable) && sessionGone(err))
        return onShared(instance, key, target, call, false);
      throw err;
    } finally {
      entry.busy--;
      entry.lastUsed = clock.now().getTime();
      if (entry.retired && entry.busy === 0) close(entry);
    }
  }

  return {
    /**
     * Calls an instance's tool at its target: the upstream's result, McpUnreachable when no
     * session could be opened, or the call's own failure.
     */
    async call(
      instance: Caller,
      target: McpTarget,
      toolKey: string,
      input: Record<string, unknown>,
      relay?: McpRelay,
    ): Promise<unknown> {
      const key = keyOf(instance.id, target);
      const own = needsOwnSession(relay, priors.get(key));
      const run = () =>
        own
          ? alone(key, target, toolKey, input, relay)
          : onShared(instance, key, target, { toolKey, input, relay }, true);
      if (!tracing.enabled) return run();
      // The span is active while the call runs: its context is what the upstream receives.
      const attributes = upstreamAttributes(toolKey, target.url, !own);
      return tracing.inSpan(`tools/call ${toolKey}`, { kind: 'client', attributes }, run);
    },

    /** The workspace's tools changed (an instance edited, disabled, deleted): its shared sessions go. */
    retireWorkspace(workspaceId: string | null): void {
      for (const [id, entry] of [...shared])
        if (workspaceId === null || entry.workspaceId === workspaceId) retire(id, entry);
    },

    /** Closes every shared session (the server is stopping). */
    closeAll(): void {
      for (const [id, entry] of [...shared]) retire(id, entry);
    },
  };
}

export type McpSessions = ReturnType<typeof createMcpSessions>;
