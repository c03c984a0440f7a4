import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthClientProvider,
  OAuthTokens,
} from '@modelcontextprotocol/client';
import { DomainError, conflict } from '../http/errors.js';
import { apiUrl } from '../http/paths.js';
import { guardedFetch } from '../lib/outbound.js';
import type { ConnectorsContext } from './context.js';
import { closeMcp, McpAuthRequired, openMcp } from './mcp.js';
import { discoverAuthorization } from './mcp-discovery.js';
import { instanceStore, userCredentialStore } from './store/index.js';
import type { InstanceRow } from './tables.js';
import { isPerUser, openUserCredentials } from './user-links.js';

/** What the initiating member may give: a client registered with the server's authorization server. */
export interface McpClientChoice {
  clientId?: string;
  clientSecret?: string;
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
  scopes?: string[];
}

/**
 * What a link to an OAuth-protected MCP server keeps (sealed, in the state until the callback,
 * then beside the tokens): where to exchange and refresh, as whom, and for which resource.
 */
export interface McpOauthLink {
  asUrl: string;
  metadata: AuthorizationServerMetadata;
  client: OAuthClientInformationMixed;
  resource: string;
  /** The scope asked for: what was granted when the token answer names none (RFC 6749 §5.1). */
  scope?: string;
  /** The step-up re-authorizations this link is the result of (mcp-reauth.ts). */
  stepUpRound?: number;
}

export const NEEDS_AUTH_MESSAGE =
  'The MCP server requires authorization: link it with POST /connectors/instances/{id}/oauth/initiate';

const failed = (what: string, err: unknown) =>
  err instanceof DomainError
    ? err
    : new DomainError('UPSTREAM_FAILED', `${what}: ${(err as Error).message}`.slice(0, 300));

/** An enabled instance whose server answered 401 waits for a link (docs/connectors.md). */
export async function markNeedsAuth(ctx: ConnectorsContext, instance: InstanceRow): Promise<void> {
  const now = ctx.kernel.clock.now().toISOString();
  await instanceStore.update(ctx.kernel.db, instance.id, {
    ...(instance.enabled ? { status: 'pending_auth' } : {}),
    health_message: NEEDS_AUTH_MESSAGE,
    last_health_check: now,
    updated_at: now,
  });
  if (instance.enabled && instance.status !== 'pending_auth')
    await ctx.toolsChanged(ctx.kernel.db, instance.workspace_id);
}

/**
 * The MCP authorization flow as a client (docs/connectors.md, Authorization of remote MCP
 * servers), on the official SDK's helpers with every request through the SSRF guard.
 */
export function createMcpAuth(ctx: ConnectorsContext) {
  const fetchFn = () => guardedFetch({ allowPrivate: ctx.kernel.config.allowPrivateNetworks });
  const sdk = () => import('@modelcontextprotocol/client');
  const { publicUrl } = ctx.kernel.config;
  const documentUrl = apiUrl(publicUrl, '/connectors/oauth/client-metadata.json');
  const genericCallback = apiUrl(publicUrl, '/connectors/oauth/mcp-generic/callback');

  /** The server's 401 challenge, if it answers one to the instance's current target. */
  async function challengeOf(instance: InstanceRow): Promise<string | null> {
    try {
      // A member's own link is not asked for here: the challenge is what an unlinked caller gets.
      await closeMcp(await openMcp(await ctx.mcpTarget(instance, null, { bare: isPerUser(instance) })));
      return null;
    } catch (err) {
      if (err instanceof McpAuthRequired) return err.challenge;
      throw failed('The MCP server could not be reached', err);
    }
  }

  /**
   * The scopes a refused call asked for, left by mcp-reauth.ts for this initiate: beside the
   * shared tokens, or beside the initiating member's own link on a per_user instance.
   */
  async function pendingStepUp(
    instance: InstanceRow,
    userId: string,
  ): Promise<{ scopes: string[]; round: number } | null> {
    let kept: string | undefined;
    if (isPerUser(instance)) {
      const row = await userCredentialStore.find(ctx.kernel.db, instance.id, userId);
      kept = row ? openUserCredentials(ctx.kernel.secrets, row).mcp_step_up : undefined;
    } else kept = (await ctx.credentialValues(instance.id))?.values.mcp_step_up;
    return kept ? (JSON.parse(kept) as { scopes: string[]; round: number }) : null;
  }

  return {
    /**
     * Gantry's Client ID Metadata Document: its URL is the client_id. A public client (PKCE,
     * no secret) whose only redirect URI is the mcp-generic callback.
     */
    clientMetadata() {
      return {
        client_id: documentUrl,
        client_name: 'Gantry',
        client_uri: publicUrl,
        redirect_uris: [genericCallback],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    },

    /**
     * Discovery (protected resource metadata from the challenge, path-inserted then root; then
     * the authorization server's, RFC 8414 then OpenID), the client (the given one, else Gantry's
     * metadata document, else dynamic registration) and the authorization URL (PKCE S256, `resource`).
     */
    async start(instance: InstanceRow, userId: string, choice: McpClientChoice, redirectUri: string, state: string) {
      const { url: serverUrl } = JSON.parse(instance.config) as { url: string };
      const s = await sdk();
      const challenge = await challengeOf(instance);
      const params = challenge
        ? s.extractWWWAuthenticateParams(new Response(null, { headers: { 'www-authenticate': challenge } }))
        : {};
      let info: Awaited<ReturnType<typeof discoverAuthorization>>;
      let resource: URL;
      try {
        info = await discoverAuthorization(s, serverUrl, {
          ...(params.resourceMetadataUrl ? { resourceMetadataUrl: params.resourceMetadataUrl } : {}),
          fetchFn: fetchFn(),
        });
        resource =
          (await s.selectResourceURL(serverUrl, {} as OAuthClientProvider, info.resourceMetadata)) ??
          s.resourceUrlFromServerUrl(serverUrl);
      } catch (err) {
        throw failed('Authorization discovery failed', err);
      }
      const { metadata } = info;
      if (!metadata) throw new DomainError('UPSTREAM_FAILED', 'The MCP server names no usable authorization server');
      // Scopes: the member's, else a step-up's union (mcp-reauth.ts), else the challenge's, else
      // what the resource supports, else none.
      const stepUp = await pendingStepUp(instance, userId);
      const scope =
        choice.scopes?.join(' ') ||
        stepUp?.scopes.join(' ') ||
        params.scope ||
        info.resourceMetadata?.scopes_supported?.join(' ') ||
        undefined;
      let client: OAuthClientInformationMixed;
      if (choice.clientId) {
        client = {
          client_id: choice.clientId,
          ...(choice.clientSecret ? { client_secret: choice.clientSecret } : {}),
          ...(choice.tokenEndpointAuthMethod ? { token_endpoint_auth_method: choice.tokenEndpointAuthMethod } : {}),
        };
      } else if (
        // A metadata document must be fetchable by the authorization server: only at an https URL.
        metadata.client_id_metadata_document_supported === true &&
        publicUrl.startsWith('https://') &&
        redirectUri === genericCallback
      ) {
        client = { client_id: documentUrl, token_endpoint_auth_method: 'none' };
      } else if (metadata.registration_endpoint) {
        const supported = metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
        const method = ['client_secret_basic', 'client_secret_post', 'none'].find((m) => supported.includes(m));
        try {
          client = await s.registerClient(info.authorizationServerUrl, {
            metadata,
            clientMetadata: {
              client_name: 'Gantry',
              redirect_uris: [redirectUri],
              grant_types: ['authorization_code', 'refresh_token'],
              response_types: ['code'],
              token_endpoint_auth_method: method ?? 'client_secret_basic',
              ...(scope ? { scope } : {}),
            },
            fetchFn: fetchFn(),
          });
        } catch (err) {
          throw failed('Dynamic client registration failed', err);
        }
      } else
        throw conflict('The authorization server allows no dynamic registration: give the clientId registered with it');
      const { authorizationUrl, codeVerifier } = await s.startAuthorization(info.authorizationServerUrl, {
        metadata,
        clientInformation: client,
        redirectUrl: redirectUri,
        state,
        resource,
        ...(scope ? { scope } : {}),
      });
      const link: McpOauthLink = {
        asUrl: info.authorizationServerUrl,
        metadata,
        client,
        resource: resource.href,
        ...(scope ? { scope } : {}),
        ...(stepUp && !choice.scopes?.length ? { stepUpRound: stepUp.round + 1 } : {}),
      };
      return { redirectUrl: authorizationUrl.href, verifier: codeVerifier, link };
    },

    /** The code exchange: `iss` checked against the metadata (RFC 9207), PKCE, `resource`. */
    async exchange(link: McpOauthLink, code: string, verifier: string, redirectUri: string, iss?: string) {
      const s = await sdk();
      return s.exchangeAuthorization(link.asUrl, {
        metadata: link.metadata,
        clientInformation: link.client,
        authorizationCode: code,
        codeVerifier: verifier,
        redirectUri,
        resource: new URL(link.resource),
        fetchFn: fetchFn(),
        ...(iss !== undefined ? { iss } : {}),
      });
    },

    /** A refresh (by the refresh job) with `resource`, authenticated as at the exchange. */
    async refresh(link: McpOauthLink, refreshToken: string): Promise<OAuthTokens> {
      const s = await sdk();
      return s.refreshAuthorization(link.asUrl, {
        metadata: link.metadata,
        clientInformation: link.client,
        refreshToken,
        resource: new URL(link.resource),
        fetchFn: fetchFn(),
      });
    },
  };
}
