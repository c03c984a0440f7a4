import { randomUUID } from 'node:crypto';
import type { InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import type { McpApprovalInfo } from '../connectors/types.js';
import type { Clock } from '../lib/clock.js';
import { envelopeCapabilities } from './input-rounds.js';
import type { ServerSdk } from './types.js';

type Server = InstanceType<ServerSdk['Server']>;

/** The key of the approval page's URL elicitation in a 2026-07-28 input_required result. */
const INPUT_KEY = 'approval';
/** The key of the link page's URL elicitation (per_user instances). */
const LINK_KEY = 'link';
/** 2025-era elicitations waiting for a decision, at most (the oldest is forgotten first). */
const MAX_WAITING = 2_000;

const linkMessageOf = (tool: string) =>
  `${tool} runs with your own account at its server, and you have not linked it. Open the page to link your ` +
  'account, then call the tool again.';

const messageOf = (tool: string) =>
  `Calling ${tool} needs the approval of a workspace owner or admin. Open the approval page (or pass the link to ` +
  'an owner or admin); once it is approved, retry the call with exactly the same arguments: the retry runs once.';

/**
 * How a call that waits for an approval shows the approval page to a client that declared URL
 * elicitation (docs/mcp.md, Approvals): a 2025-era session gets the URLElicitationRequired
 * error (-32042) at once, and notifications/elicitation/complete on its stream once the
 * approval is decided; a 2026-07-28 request gets an input_required result carrying the URL
 * elicitation, and its retry with the answer gets the pending result. Nothing waits for the
 * human; any other client keeps the isError result with the link.
 */
export function createApprovalPrompts(sdk: ServerSdk, clock: Clock) {
  /** Approval id (the elicitationId) -> the sessions shown its page, until it expires. */
  const waiting = new Map<string, { servers: Set<Server>; until: number }>();

  function remember(id: string, server: Server, expiresAt: string): void {
    const now = clock.now().getTime();
    for (const [key, entry] of waiting) if (entry.until <= now) waiting.delete(key);
    const entry = waiting.get(id) ?? { servers: new Set<Server>(), until: Date.parse(expiresAt) || now };
    entry.servers.add(server);
    waiting.delete(id);
    waiting.set(id, entry);
    for (const key of [...waiting.keys()].slice(0, Math.max(0, waiting.size - MAX_WAITING))) waiting.delete(key);
  }

  return {
    /**
     * What to answer instead of the pending isError result, or null to keep it. Legacy: throws
     * the -32042 error. Modern: the input_required result, unless this request is the retry
     * that answers it (then the client was shown the page: it gets the pending result).
     */
    prompt(
      server: Server,
      ctx: ServerContext,
      era: 'legacy' | 'modern',
      tool: string,
      approval: McpApprovalInfo,
    ): InputRequiredResult | null {
      const message = messageOf(tool);
      if (era === 'legacy') {
        if (!server.getClientCapabilities()?.elicitation?.url) return null;
        remember(approval.id, server, approval.expiresAt);
        throw new sdk.UrlElicitationRequiredError(
          [{ mode: 'url', elicitationId: approval.id, url: approval.url, message }],
          `${message} Approval page: ${approval.url} (before ${approval.expiresAt}).`,
        );
      }
      if (!envelopeCapabilities(sdk, ctx)?.elicitation?.url || ctx.mcpReq.inputResponses?.[INPUT_KEY] !== undefined)
        return null;
      return sdk.inputRequired({
        inputRequests: { [INPUT_KEY]: sdk.inputRequired.elicitUrl({ url: approval.url, message }) },
      });
    },

    /**
     * A per_user instance the caller has not linked (docs/mcp.md, Calls): the link page by URL
     * elicitation where the client declared it, as for an approval page, or null to keep the
     * isError result. Nothing is remembered: no completion is sent for a link.
     */
    link(
      server: Server,
      ctx: ServerContext,
      era: 'legacy' | 'modern',
      tool: string,
      link: { url: string },
    ): InputRequiredResult | null {
      const message = linkMessageOf(tool);
      if (era === 'legacy') {
        if (!server.getClientCapabilities()?.elicitation?.url) return null;
        throw new sdk.UrlElicitationRequiredError(
          [{ mode: 'url', elicitationId: randomUUID(), url: link.url, message }],
          `${message} Link page: ${link.url}`,
        );
      }
      if (!envelopeCapabilities(sdk, ctx)?.elicitation?.url || ctx.mcpReq.inputResponses?.[LINK_KEY] !== undefined)
        return null;
      return sdk.inputRequired({
        inputRequests: { [LINK_KEY]: sdk.inputRequired.elicitUrl({ url: link.url, message }) },
      });
    },

    /** An approval was decided: the 2025-era sessions shown its page are told (if still open). */
    decided(id: string): void {
      const entry = waiting.get(id);
      if (!entry) return;
      waiting.delete(id);
      for (const server of entry.servers)
        void Promise.resolve()
          .then(() => server.createElicitationCompletionNotifier(id)())
          .catch(() => undefined);
    },
  };
}

export type ApprovalPrompts = ReturnType<typeof createApprovalPrompts>;
