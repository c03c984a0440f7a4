import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import type { WorkspaceContext } from '../accounts/access.js';
import type { McpCaller } from './caller.js';

/** Open `subscriptions/listen` streams per user, and in all in this process (docs/mcp.md, list_changed). */
const MAX_PER_USER = 8;
export const MAX_LISTENS = 2_000;

interface Listen {
  userId: string;
  ws: WorkspaceContext;
  /** The workspace's tools as last seen (tools.ts, fingerprint), to tell a real change from a no-op. */
  fingerprint: Promise<string | null>;
  deliver(event: ServerEvent): void;
}

const isListen = (body: unknown) => (body as { method?: unknown } | undefined)?.method === 'subscriptions/listen';

/**
 * The 2026-07-28 era's list_changed: a client opens `subscriptions/listen`, and the SDK's listen
 * router (createMcpHandler) serves the stream, subscribing it to this bus. The bus knows whose
 * stream it is because every modern request runs inside `serve`, which holds the caller; a
 * workspace's change is then delivered to that workspace's listens whose list did change.
 */
export function createModernListens(fingerprint: (ws: WorkspaceContext) => Promise<string | null>) {
  const current = new AsyncLocalStorage<McpCaller>();
  const listens = new Set<Listen>();
  /** Listens a user has open or is opening (counted before the SDK subscribes, so two at once cannot both slip in). */
  const perUser = new Map<string, number>();
  const count = (userId: string, by: number) => {
    const n = (perUser.get(userId) ?? 0) + by;
    if (n > 0) perUser.set(userId, n);
    else perUser.delete(userId);
  };

  const bus: ServerEventBus = {
    // The SDK's own publish side (handler.notify) is not used: changes go to one workspace at a time.
    publish(event) {
      for (const listen of [...listens]) listen.deliver(event);
    },
    subscribe(deliver) {
      const caller = current.getStore();
      // Every modern request runs inside serve(); a listen without a caller hears nothing.
      if (!caller) return () => undefined;
      const listen: Listen = {
        userId: caller.principal.userId,
        ws: caller.ws,
        fingerprint: fingerprint(caller.ws),
        deliver,
      };
      listens.add(listen);
      count(listen.userId, 1);
      let live = true;
      return () => {
        if (!live) return;
        live = false;
        listens.delete(listen);
        count(listen.userId, -1);
      };
    },
  };

  return {
    bus,

    /**
     * Runs one modern request as `caller`'s. A listen beyond the user's limit is refused the way
     * the SDK refuses one beyond its own: in-band, JSON-RPC -32603, before any acknowledgement.
     */
    async serve(caller: McpCaller, parsedBody: unknown, run: () => Promise<Response>): Promise<Response> {
      if (!isListen(parsedBody)) return current.run(caller, run);
      const { userId } = caller.principal;
      if ((perUser.get(userId) ?? 0) >= MAX_PER_USER) {
        const id = (parsedBody as { id?: unknown }).id ?? null;
        const error = { code: -32603, message: `Subscription limit reached (${MAX_PER_USER} per user)` };
        return Response.json({ jsonrpc: '2.0', id, error });
      }
      count(userId, 1);
      try {
        return await current.run(caller, run);
      } finally {
        count(userId, -1);
      }
    },

    /** The workspace's tools may have changed: its listens whose list did change hear of it. */
    async toolsChanged(workspaceId: string): Promise<void> {
      const mine = [...listens].filter((l) => l.ws.workspaceId === workspaceId);
      if (mine.length === 0) return;
      const now = await fingerprint(mine[0].ws);
      for (const listen of mine) {
        const before = await listen.fingerprint;
        listen.fingerprint = Promise.resolve(now);
        if (before !== now) listen.deliver({ kind: 'tools_list_changed' });
      }
    },
  };
}
