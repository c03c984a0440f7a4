import type { AuthInfo } from '@modelcontextprotocol/server';
import type { WorkspaceContext } from '../accounts/access.js';
import type { AccountsService } from '../accounts/service.js';
import type { AuditService } from '../audit/service.js';
import type { ConnectorsService } from '../connectors/service.js';
import type { Principal } from '../http/auth.js';
import { DomainError } from '../http/errors.js';
import type { Kernel } from '../kernel.js';
import { sha256Hex } from '../lib/crypto.js';
import { McpAuthError, type createMcpAuth } from '../oauth/mcp-auth.js';
import type { McpCaller } from './caller.js';
import { createApprovalPrompts } from './approval-prompts.js';
import { createDirectAnswers, type DirectReply } from './direct.js';
import { createInputRounds } from './input-rounds.js';
import { createLegacySessions } from './legacy-sessions.js';
import { createModernListens, MAX_LISTENS } from './listens.js';
import { createServerFactory, createToolListing, toMcpTool } from './mcp-server.js';
import type { ServerSdk } from './types.js';
import { createToolCalls } from './tool-calls.js';

export interface McpDeps {
  oauth: { mcp: ReturnType<typeof createMcpAuth> };
  accounts: AccountsService;
  connectors: ConnectorsService;
  audit: AuditService;
}

/**
 * Gantry as an MCP server (docs/mcp.md): who may call (the MCP token and its workspace), and
 * the two protocol eras over one set of tools: 2026-07-28 requests through the SDK's stateless
 * handler, 2025-era ones through sessions kept here.
 */
export function createMcpService(kernel: Kernel, deps: McpDeps) {
  const { oauth, accounts, connectors } = deps;
  const list = createToolListing(kernel, connectors);
  const calls = createToolCalls(kernel, deps);
  const direct = createDirectAnswers({ list, calls, logger: kernel.logger });
  const served = kernel.metrics.counter(
    'gantry_mcp_requests_total',
    'MCP endpoint requests by protocol era and by who answered them: the direct path or the SDK (docs/mcp.md, Performance)',
    ['era', 'path'],
  );

  // The SDK builds its schema set at import: loaded on the first MCP request, so an appliance
  // nobody connects an agent to does not carry it.
  async function load() {
    const sdk: ServerSdk = await import('@modelcontextprotocol/server');
    const prompts = createApprovalPrompts(sdk, kernel.clock);
    const rounds = createInputRounds(sdk, kernel.clock);
    const factory = createServerFactory(sdk, { list, calls, prompts, rounds, tracing: kernel.tracing });
    const listens = createModernListens(fingerprint);
    return {
      sdk,
      prompts,
      modern: sdk.createMcpHandler(factory, {
        legacy: 'reject',
        onerror: (err) => kernel.logger.debug('mcp request refused', { reason: err.message }),
        bus: listens.bus,
        maxSubscriptions: MAX_LISTENS,
      }),
      listens,
      legacy: createLegacySessions(sdk, factory, kernel.clock, fingerprint, kernel.config.mcpMaxSessions),
    };
  }
  let entry: ReturnType<typeof load> | null = null;

  // By the catalog's list, which is one shared object per workspace until its tools change
  // (docs/mcp.md, Performance): every session opened meanwhile reuses the print.
  const prints = new WeakMap<object, string>();

  /** What a client would see listed (names, schemas, annotations): equal lists, equal prints. */
  async function fingerprint(ws: WorkspaceContext): Promise<string | null> {
    try {
      const tools = await connectors.tools.listExposed(ws);
      let print = prints.get(tools);
      if (print === undefined) {
        print = sha256Hex(JSON.stringify(tools.map(toMcpTool)));
        prints.set(tools, print);
      }
      return print;
    } catch (err) {
      kernel.logger.warn('mcp tools fingerprint failed', { workspaceId: ws.workspaceId, err: err as Error });
      return null;
    }
  }
  connectors.tools.onToolsChanged((workspaceId) => {
    if (!entry) return;
    void entry
      .then(({ legacy, listens }) => Promise.all([legacy.toolsChanged(workspaceId), listens.toolsChanged(workspaceId)]))
      .catch((err: Error) => kernel.logger.warn('mcp list_changed failed', { workspaceId, err }));
  });

  connectors.approvals.onDecided((approvalId) => {
    if (entry) void entry.then(({ prompts }) => prompts.decided(approvalId)).catch(() => undefined);
  });

  /** The token's workspace is gone, or the user left it: as good as an invalid token. */
  function noWorkspace(): McpAuthError {
    const description = 'The workspace this access token is bound to is no longer available; authorize again';
    return new McpAuthError(
      'invalid_token',
      description,
      401,
      oauth.mcp.challenge({ error: 'invalid_token', description }),
    );
  }

  return {
    /** The caller of a request, from its Authorization header; McpAuthError when refused. */
    async authenticate(header: string | undefined): Promise<McpCaller> {
      const token = await oauth.mcp.authenticate(header);
      const principal: Principal = {
        userId: token.userId,
        kind: 'oauth',
        scopes: token.scopes,
        clientId: token.clientId,
        sessionId: null,
        accountId: null,
        tokenId: token.tokenId,
      };
      const ws = await accounts.access.workspace(principal, { workspaceId: token.workspaceId }).catch((err) => {
        throw err instanceof DomainError && (err.status === 403 || err.status === 404) ? noWorkspace() : err;
      });
      return { principal, ws, token };
    },

    /**
     * A POST's JSON-RPC answer from the direct path (direct.ts), or null when the request goes
     * the SDK's way (`handle`).
     */
    async answerDirectly(
      headers: Record<string, unknown>,
      body: unknown,
      caller: McpCaller,
    ): Promise<DirectReply | null> {
      const { sdk, legacy } = await (entry ??= load());
      const sessionId = headers['mcp-session-id'];
      const session = typeof sessionId === 'string' ? legacy.find(sessionId, caller) : null;
      const reply = session
        ? await direct.legacy(sdk, session, headers, body, caller)
        : typeof sessionId === 'string'
          ? null
          : await direct.modern(sdk, headers, body, caller);
      if (reply) served.inc({ era: session ? 'legacy' : 'modern', path: 'direct' });
      return reply;
    },

    /** Serves one MCP HTTP request of an authenticated caller. */
    async handle(request: Request, parsedBody: unknown, caller: McpCaller): Promise<Response> {
      const { sdk, modern, listens, legacy } = await (entry ??= load());
      const authInfo: AuthInfo = {
        // The jti, not the token: nothing past this point needs the bearer, so nothing can leak it.
        token: caller.token.tokenId,
        clientId: caller.token.clientId,
        scopes: caller.token.scopes,
        expiresAt: caller.token.expiresAt,
        resource: new URL(oauth.mcp.resource),
        extra: { caller },
      };
      const era = (await sdk.isLegacyRequest(request, parsedBody)) ? 'legacy' : 'modern';
      served.inc({ era, path: 'sdk' });
      if (era === 'legacy') return legacy.handle(request, parsedBody, caller, authInfo);
      return listens.serve(caller, parsedBody, () => modern.fetch(request, { authInfo, parsedBody }));
    },

    /** Ends open streams and sessions (the server is stopping). */
    async close(): Promise<void> {
      if (!entry) return;
      const { modern, legacy } = await entry;
      legacy.closeAll();
      await modern.close();
    },
  };
}
