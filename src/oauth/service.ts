import { LRUCache } from 'lru-cache';
import { inTransaction, type Executor } from '../db/tx.js';
import { notFound } from '../http/errors.js';
import { sha256Hex } from '../lib/crypto.js';
import { isUuid } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import { createAuthorize } from './authorize.js';
import { authenticateClient, claimedClientId, type ClientCredentials } from './client-auth.js';
import { createEndpointLimits, type EndpointCaller, type GrantMeter, type OAuthEndpoint } from './endpoint-limits.js';
import { createClients } from './clients.js';
import type { Client } from './types.js';
import { isMetadataDocumentId } from './metadata-documents.js';
import { createRegistration } from './registration.js';
import { invalidRequest, invalidTarget, OAuthError } from './errors.js';
import { authorizationCodeGrant } from './grants/authorization-code.js';
import { createRefreshBatches } from './grants/refresh-batches.js';
import { refreshTokenGrant } from './grants/refresh-token.js';
import { JWT_BEARER_GRANT, jwtBearerGrant, type IdentityAssertions } from './grants/jwt-bearer.js';
import { createMcpAuth } from './mcp-auth.js';
import { parseResource, type ResourceKind } from './resources.js';
import { createTokens, type AccessTokenResponse, type TokenResponse } from './tokens.js';
import { createWorkspaceChoice, type WorkspaceDirectory } from './workspace-choice.js';
import * as store from './store/index.js';

export interface UserInfo {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string | null;
  preferred_username?: string | null;
}

/** The OAuth 2.0 authorization server: clients, authorize, token, revoke, userinfo, grants. */
export function createOAuthService(
  kernel: Kernel,
  deps: { identity: IdentityService; accounts: WorkspaceDirectory; assertions: IdentityAssertions },
) {
  const { db, clock } = kernel;
  const tokens = createTokens(kernel);
  const clients = createClients(kernel, tokens);
  const authorize = createAuthorize(kernel, clients, createWorkspaceChoice(deps.accounts));
  const registration = createRegistration(kernel, clients);
  const limits = createEndpointLimits(kernel);
  // The profile behind userinfo, kept one second: the same window docs/interface.md (Operations) gives any change
  // to reach a running server, and a hot client polling userinfo then costs no query.
  const profiles = new LRUCache<string, Awaited<ReturnType<IdentityService['getUser']>>>({ max: 5_000, ttl: 1_000 });

  /**
   * Client authentication within the failure budgets: a spent address is refused before the
   * secret is looked at; a spent client_id only refuses a request that fails to authenticate.
   */
  async function authenticate(endpoint: OAuthEndpoint, credentials: ClientCredentials, caller: EndpointCaller) {
    const beforeGrant = await limits.beforeClientAuth(endpoint, caller, claimedClientId(credentials));
    try {
      return { client: (await authenticateClient(clients, credentials)).client, beforeGrant };
    } catch (err) {
      if (err instanceof OAuthError) {
        const claimed = claimedClientId(credentials);
        const named = claimed === null ? null : await clients.find(claimed);
        throw (await limits.clientAuthFailed(caller, named?.type === 'confidential' ? named.id : null)) ?? err;
      }
      throw err;
    }
  }

  /**
   * Runs an authenticated client's request: `meter` charges the user it is for; a request
   * that never reached one (it failed, or named nothing of this client's) charges the
   * client's failures from this address instead, checked up front.
   */
  async function metered<T>(
    endpoint: OAuthEndpoint,
    caller: EndpointCaller,
    credentials: ClientCredentials,
    run: (client: Client, meter: GrantMeter) => Promise<T>,
  ): Promise<T> {
    const { client, beforeGrant } = await authenticate(endpoint, credentials, caller);
    const clientId = client.id;
    await beforeGrant(clientId);
    // Once per request and user: on PostgreSQL a retried transaction runs the grant's body, and
    // so the meter, again (docs/postgres.md, Transactions).
    let charged: { userId: string; refusal: ReturnType<GrantMeter> } | null = null;
    let chargedInProcess = false;
    const meter: GrantMeter = Object.assign(
      (userId: string) => {
        if (charged?.userId !== userId)
          charged = { userId, refusal: limits.charge(endpoint, caller, clientId, userId) };
        return charged.refusal;
      },
      {
        inProcess: (userId: string) => {
          chargedInProcess = true;
          return limits.chargeInProcess(endpoint, caller, clientId, userId);
        },
      },
    );
    try {
      return await run(client, meter);
    } finally {
      if (!charged && !chargedInProcess) await limits.grantFailed(endpoint, caller, clientId);
    }
  }

  function params(body: Record<string, unknown>): Record<string, string | undefined> {
    const out: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(body)) {
      // RFC 8707 2 allows several resources; a token here is for one (docs/oauth.md, Resource indicators).
      if (name === 'resource' && typeof value !== 'string') throw invalidTarget('Ask for one resource per token');
      // RFC 6749 3.2: request parameters must not be included more than once.
      if (typeof value !== 'string') throw invalidRequest(`${name} must be given once`);
      out[name] = value;
    }
    return out;
  }

  /** The token request's `resource` (RFC 8707 2.2), null when absent; invalid_target when it is no resource of ours. */
  function target(raw: string | undefined): ResourceKind | null {
    if (raw === undefined) return null;
    const parsed = parseResource(kernel.config.publicUrl, raw);
    if ('problem' in parsed) throw invalidTarget(parsed.problem);
    return parsed.kind;
  }

  const batches = createRefreshBatches(kernel, tokens);

  /**
   * PostgreSQL's refresh grant in one round trip (grants/refresh-batches.ts): for a
   * well-formed request, the failure budgets, the meter and the rotation are one statement,
   * shared with the other refreshes of the same turn. A client that fails to authenticate
   * takes the same statement, which only reads its address's budget: a spent address is then
   * answered the same way whether the secret was right or wrong (docs/security.md). Null
   * whenever it cannot answer, having changed nothing: `metered` then runs the request from
   * the start, as on SQLite (a failed authentication, for one, is counted there).
   */
  async function refreshInOneStatement(credentials: ClientCredentials, caller: EndpointCaller) {
    if (credentials.body.grant_type !== 'refresh_token' || !limits.countsInStatements) return null;
    const claimed = claimedClientId(credentials);
    if (claimed === null) return null;
    let body: Record<string, string | undefined>;
    let resource: ResourceKind | null;
    try {
      body = params(credentials.body);
      resource = target(body.resource);
    } catch (err) {
      if (err instanceof OAuthError) return null;
      throw err;
    }
    const client = await authenticateClient(clients, credentials).then(
      (authenticated) => authenticated.client,
      (err: unknown) => {
        if (err instanceof OAuthError) return null;
        throw err;
      },
    );
    return batches.rotate(client, body, resource, limits.inStatement('oauth.token', caller, client?.id ?? claimed));
  }

  const granted = kernel.metrics.counter(
    'gantry_oauth_token_grants_total',
    'Tokens issued at /oauth/token, by grant type',
    ['grant_type'],
  );
  const counted =
    (grantType: string) =>
    <T extends AccessTokenResponse>(issued: T) => {
      granted.inc({ grant_type: grantType });
      return issued;
    };

  return {
    clients,
    registration,
    tokens,
    authorize,
    accessTokenVerifier: tokens.verifier,
    /** The MCP endpoint's side of OAuth: its metadata, challenges and token verifier (mcp-auth.ts). */
    mcp: createMcpAuth(kernel.config.publicUrl, tokens),

    /**
     * POST /oauth/token: client first (401), then the grant (RFC 6749 5.2 table). Counted as
     * endpoint-limits.ts says: the grant charges its user before it changes anything.
     */
    async token(credentials: ClientCredentials, caller: EndpointCaller): Promise<TokenResponse | AccessTokenResponse> {
      const rotated = await refreshInOneStatement(credentials, caller);
      if (rotated) return counted('refresh_token')(rotated);
      return metered('oauth.token', caller, credentials, (client, meter) => {
        const body = params(credentials.body);
        const grantType = body.grant_type;
        if (!grantType) throw invalidRequest('grant_type is required');
        if (grantType === 'authorization_code')
          return authorizationCodeGrant(kernel, tokens, client, body, target(body.resource), meter).then(
            counted(grantType),
          );
        if (grantType === 'refresh_token')
          return refreshTokenGrant(kernel, tokens, client, body, target(body.resource), meter).then(counted(grantType));
        if (grantType === JWT_BEARER_GRANT)
          return jwtBearerGrant(kernel, tokens, deps.assertions, client, body, meter).then(counted('jwt-bearer'));
        throw new OAuthError(
          'unsupported_grant_type',
          `grant_type must be authorization_code, refresh_token or ${JWT_BEARER_GRANT}`,
        );
      });
    },

    /**
     * POST /oauth/revoke (RFC 7009): the client authenticates first; then success whatever
     * the token is. A refresh token ends its family; an access token ends alone. Another
     * client's token is left untouched (2.1).
     */
    async revoke(credentials: ClientCredentials, caller: EndpointCaller): Promise<void> {
      // A token that is not this client's charges the client's failed requests: nothing is revoked.
      await metered('oauth.revoke', caller, credentials, async (client, meter) => {
        const body = params(credentials.body);
        const token = body.token;
        if (!token) throw invalidRequest('token is required');
        const refresh = await store.findRefreshToken(db, sha256Hex(token));
        if (refresh) {
          if (refresh.client_id !== client.id) return;
          const refused = await meter(refresh.user_id);
          if (refused) throw refused;
          await inTransaction(db, (trx) => tokens.revokeGrant(trx, refresh.grant_id, 'revoked_by_client'));
          return;
        }
        const claims = await tokens.readAccessToken(token);
        if (!claims || claims.clientId !== client.id) return;
        const refused = await meter(claims.sub);
        if (refused) throw refused;
        await inTransaction(db, (trx) => tokens.revokeAccessToken(trx, claims));
      });
    },

    /** Claims by scope (docs/interface.md, OAuth: UserInfo); nothing else about the user, ever. */
    async userInfo(userId: string, scopes: readonly string[]): Promise<UserInfo> {
      let user = profiles.get(userId);
      if (!user) {
        user = await deps.identity.getUser(userId);
        profiles.set(userId, user);
      }
      const info: UserInfo = { sub: user.id };
      if (scopes.includes('email:read')) {
        info.email = user.email;
        info.email_verified = user.email_verified_at !== null;
      }
      if (scopes.includes('profile:read')) {
        info.name = user.full_name;
        info.preferred_username = user.username;
      }
      return info;
    },

    /** The apps a user granted, with what they may do. */
    async listGrants(userId: string) {
      const rows = await store.listConsents(db, userId);
      return rows.map((r) => ({
        clientId: r.client_id,
        clientName: r.name,
        scopes: r.scopes.split(' '),
        grantedAt: r.created_at,
        updatedAt: r.updated_at,
      }));
    },

    /**
     * Ends every third-party grant of a user (refresh tokens, and access tokens at their next
     * use), in the caller's transaction. With `forgetConsents`, the remembered consents go too,
     * so no client is approved again without asking (docs/oauth.md, Revocation).
     */
    async revokeAllGrantsOfUser(
      executor: Executor,
      userId: string,
      reason: string,
      options: { forgetConsents?: boolean } = {},
    ): Promise<{ revokedGrants: number; forgottenConsents: number }> {
      const ids = await tokens.revokeAllGrantsOfUser(executor, userId, reason);
      const forgottenConsents = options.forgetConsents ? await store.deleteConsentsOfUser(executor, userId) : 0;
      return { revokedGrants: ids.length, forgottenConsents };
    },

    /** Takes back everything a user gave a client: the consent and every token. */
    async revokeClientGrant(userId: string, clientId: string) {
      if (!isUuid(clientId) && !isMetadataDocumentId(clientId)) throw notFound('Grant');
      return inTransaction(db, async (trx) => {
        const hadConsent = await store.deleteConsent(trx, userId, clientId);
        const ids = await tokens.revokeGrants(trx, { clientId, userId }, 'revoked_by_user');
        if (!hadConsent && ids.length === 0) throw notFound('Grant');
        return { clientId, revoked: true, revokedAt: clock.now().toISOString() };
      });
    },
  };
}
