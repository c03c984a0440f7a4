import type { ClientCapabilities, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import { INTERACTIVE_CALL_MS } from '../connectors/types.js';
import { argumentsDigest } from '../lib/canonical-json.js';
import type { Clock } from '../lib/clock.js';
import { randomToken } from '../lib/crypto.js';
import type { McpCaller } from './caller.js';
import type { ServerSdk } from './types.js';
import type { CallAnswer } from './tool-calls.js';

/** A round trip to the client must end before the upstream call that waits on it gives up. */
export const ROUND_TRIP_MS = INTERACTIVE_CALL_MS - 30_000;
/** Calls held for their caller's answers, per user, client and workspace, and in the process. */
const MAX_PER_OWNER = 16;
const MAX_HELD = 1_000;

interface Ask {
  method: 'sampling/createMessage' | 'elicitation/create';
  params: unknown;
  resolve(answer: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** An upstream call of a 2026-07-28 caller that may ask it for input: it runs on across the rounds. */
interface Held {
  id: string;
  owner: string;
  /** The tool and a digest of the arguments: a retry must repeat the original call. */
  target: string;
  asks: Map<string, Ask>;
  count: number;
  outcome?: { answer: CallAnswer | null } | { error: unknown };
  /** The round being served, if any: its context (progress, log messages) and how to wake it. */
  round: { ctx: ServerContext; wake(): void } | null;
  /** Forgotten after this once it has an outcome (nobody came back for it). */
  until: number;
}

/** What the relay of a held call uses (relay.ts): the caller's capabilities, its current round, its answers. */
export interface InputChannel {
  capabilities: ClientCapabilities;
  ctx(): ServerContext;
  ask(method: Ask['method'], params: unknown): Promise<unknown>;
}

const ownerOf = (caller: McpCaller) => `${caller.principal.userId}\n${caller.token.clientId}\n${caller.ws.workspaceId}`;
const targetOf = (name: string, args: Record<string, unknown>) => `${name}\n${argumentsDigest(args)}`;

/** The capabilities a 2026-07-28 request declares in its `_meta`. */
export const envelopeCapabilities = (sdk: ServerSdk, ctx: ServerContext) =>
  (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[sdk.CLIENT_CAPABILITIES_META_KEY] as
    | ClientCapabilities
    | undefined;

/**
 * Sampling and elicitation of an upstream call carried to a 2026-07-28 caller as multi
 * round-trip rounds (docs/mcp.md, Upstream requests in 2026-07-28): the upstream's request
 * becomes an input_required result whose requestState names the call held here; the caller's
 * retry of the same call (same user, client, workspace, tool and arguments) with that state
 * hands its answers to the waiting upstream call and waits for what comes next. State lives in
 * this process only, bounded in number and time.
 */
export function createInputRounds(sdk: ServerSdk, clock: Clock) {
  const held = new Map<string, Held>();
  const unknownState = () =>
    new sdk.ProtocolError(
      sdk.ProtocolErrorCode.InvalidParams,
      'Unknown or expired requestState (or another call): call the tool again',
    );

  function sweep(now: number): void {
    for (const [id, h] of held) if (h.outcome && h.until <= now) held.delete(id);
  }

  function settle(h: Held, outcome: NonNullable<Held['outcome']>): void {
    h.outcome = outcome;
    h.until = clock.now().getTime() + ROUND_TRIP_MS;
    for (const ask of h.asks.values()) {
      clearTimeout(ask.timer);
      ask.reject(new Error('The call ended'));
    }
    h.asks.clear();
    h.round?.wake();
  }

  function channel(h: Held, capabilities: ClientCapabilities, first: ServerContext): InputChannel {
    return {
      capabilities,
      ctx: () => h.round?.ctx ?? first,
      ask: (method, params) =>
        new Promise((resolve, reject) => {
          if (h.outcome) return reject(new Error('The call ended'));
          const key = `${method === 'sampling/createMessage' ? 'sampling' : 'elicitation'}-${++h.count}`;
          const timer = setTimeout(() => {
            h.asks.delete(key);
            reject(new Error('The caller did not answer in time'));
          }, ROUND_TRIP_MS);
          timer.unref();
          h.asks.set(key, { method, params, resolve, reject, timer });
          h.round?.wake();
        }),
    };
  }

  /** Serves one round: waits for the upstream's next request(s) or the call's end. */
  async function round(
    h: Held,
    ctx: ServerContext,
  ): Promise<{ answer: CallAnswer | null } | { input: InputRequiredResult }> {
    await new Promise<void>((resolve) => {
      const ready = () => Boolean(h.outcome) || h.asks.size > 0;
      const mine = { ctx, wake: () => void (ready() && done()) };
      const done = () => {
        if (h.round === mine) h.round = null;
        ctx.mcpReq.signal.removeEventListener('abort', done);
        // A tick more, so that requests the upstream sends together go out together.
        setImmediate(resolve);
      };
      h.round = mine;
      if (ready()) done();
      else ctx.mcpReq.signal.addEventListener('abort', done, { once: true });
    });
    if (h.outcome) {
      held.delete(h.id);
      if ('error' in h.outcome) throw h.outcome.error;
      return { answer: h.outcome.answer };
    }
    if (ctx.mcpReq.signal.aborted) throw new Error('The caller went away');
    h.until = clock.now().getTime() + ROUND_TRIP_MS;
    const inputRequests = Object.fromEntries(
      [...h.asks].map(([key, a]) => [key, { method: a.method, params: a.params }]),
    );
    return { input: sdk.inputRequired({ inputRequests: inputRequests as never, requestState: h.id }) };
  }

  return {
    /**
     * A tools/call of a 2026-07-28 request: a retry carrying requestState resumes its held call
     * with the answers; a fresh call whose caller declared sampling or elicitation is held (room
     * permitting) and its relay given the channel; any other runs as it always did.
     */
    async serve(
      ctx: ServerContext,
      caller: McpCaller,
      name: string,
      args: Record<string, unknown>,
      start: (channel?: InputChannel) => Promise<CallAnswer | null>,
    ): Promise<{ answer: CallAnswer | null } | { input: InputRequiredResult }> {
      const state = ctx.mcpReq.requestState<unknown>();
      if (state !== undefined) {
        const h = typeof state === 'string' ? held.get(state) : undefined;
        if (!h || h.round || h.owner !== ownerOf(caller) || h.target !== targetOf(name, args)) throw unknownState();
        const responses = ctx.mcpReq.inputResponses ?? {};
        for (const [key, ask] of h.asks) {
          if (!(key in responses)) continue;
          clearTimeout(ask.timer);
          h.asks.delete(key);
          ask.resolve(responses[key]);
        }
        return round(h, ctx);
      }
      const caps = envelopeCapabilities(sdk, ctx);
      const now = clock.now().getTime();
      sweep(now);
      const owner = ownerOf(caller);
      const room = held.size < MAX_HELD && [...held.values()].filter((h) => h.owner === owner).length < MAX_PER_OWNER;
      if (!(caps?.sampling || caps?.elicitation) || !room) return { answer: await start() };
      const h: Held = {
        id: randomToken(24),
        owner,
        target: targetOf(name, args),
        asks: new Map(),
        count: 0,
        round: null,
        until: now + INTERACTIVE_CALL_MS,
      };
      held.set(h.id, h);
      start(channel(h, caps, ctx)).then(
        (answer) => settle(h, { answer }),
        (error: unknown) => settle(h, { error }),
      );
      return round(h, ctx);
    },
  };
}

export type InputRounds = ReturnType<typeof createInputRounds>;
