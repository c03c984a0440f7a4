import { LRUCache } from 'lru-cache';
import { inTransaction, type Executor } from '../db/tx.js';
import { notFound } from '../http/errors.js';
import { sha256Hex } from '../lib/crypto.js';
import { isUuid } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import { createAuthorize } from './authorize.js';
import { createBrowserSessions } from './browser-sessions.js';
import { authenticateClient, type ClientCredentials } from './client-auth.js';
import { createClients } from './clients.js';
import { invalidRequest, OAuthError } from './errors.js';
import { authorizationCodeGrant } from './grants/authorization-code.js';
import { refreshTokenGrant } from './grants/refresh-token.js';
import { createTokens, type TokenResponse } from './tokens.js';
import * as store from './store.js';

export interface UserInfo {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string | null;
  preferred_username?: string | null;
}

/** The OAuth 2.0 authorization server: clients, authorize, token, revoke, userinfo, grants. */
export function createOAuthService(kernel: Kernel, deps: { identity: IdentityService }) {
  const { db, clock } = kernel;
  const tokens = createTokens(kernel);
  const clients = createClients(kernel, tokens);
  const authorize = createAuthorize(kernel, clients);
  const browserSessions = createBrowserSessions(kernel, deps.identity);
  // The profile behind userinfo, kept one second: the same window CONTRACT.md gives any change
  // to reach a running server, and a hot client polling userinfo then costs no query.
  const profiles = new LRUCache<string, Awaited<ReturnType<IdentityService['getUser']>>>({ max: 5_000, ttl: 1_000 });

  function params(body: Record<string, unknown>): Record<string, string | undefined> {
    const out: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(body)) {
      // RFC 6749 3.2: request parameters must not be included more than once.
      if (typeof value !== 'string') throw invalidRequest(`${name} must be given once`);
      out[name] = value;
    }
    return out;
  }

  return {
    clients,
    tokens,
    authorize,
    browserSessions,
    accessTokenVerifier: tokens.verifier,

    /** POST /oauth/token: client first (401), then the grant (RFC 6749 5.2 table). */
    async token(credentials: ClientCredentials): Promise<TokenResponse> {
      const { client } = await authenticateClient(clients, credentials);
      const body = params(credentials.body);
      const grantType = body.grant_type;
      if (!grantType) throw invalidRequest('grant_type is required');
      if (grantType === 'authorization_code') return authorizationCodeGrant(kernel, tokens, client, body);
      if (grantType === 'refresh_token') return refreshTokenGrant(kernel, tokens, client, body);
      throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
    },

    /**
     * POST /oauth/revoke (RFC 7009): the client authenticates first; then success whatever
     * the token is. A refresh token ends its family; an access token ends alone. Another
     * client's token is left untouched (2.1).
     */
    async revoke(credentials: ClientCredentials): Promise<void> {
      const { client } = await authenticateClient(clients, credentials);
      const body = params(credentials.body);
      const token = body.token;
      if (!token) throw invalidRequest('token is required');
      const refresh = await store.findRefreshToken(db, sha256Hex(token));
      if (refresh) {
        if (refresh.client_id === client.id) await inTransaction(db, (trx) => tokens.revokeGrant(trx, refresh.grant_id, 'revoked_by_client'));
        return;
      }
      const claims = await tokens.verifyAccessToken(token);
      if (claims && claims.clientId === client.id) await inTransaction(db, (trx) => tokens.revokeAccessToken(trx, claims));
    },

    /** Claims by scope (spec, UserInfo response); nothing else about the user, ever. */
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
      return rows.map((r) => ({ clientId: r.client_id, clientName: r.name, scopes: r.scopes.split(' '), grantedAt: r.created_at, updatedAt: r.updated_at }));
    },

    /**
     * Ends every third-party grant of a user (refresh tokens, and access tokens at their next
     * use), in the caller's transaction. With `forgetConsents`, the remembered consents go too,
     * so no client is approved again without asking (docs/oauth.md, Revocation).
     */
    async revokeAllGrantsOfUser(executor: Executor, userId: string, reason: string, options: { forgetConsents?: boolean } = {}): Promise<{ revokedGrants: number; forgottenConsents: number }> {
      const ids = await tokens.revokeAllGrantsOfUser(executor, userId, reason);
      const forgottenConsents = options.forgetConsents ? await store.deleteConsentsOfUser(executor, userId) : 0;
      return { revokedGrants: ids.length, forgottenConsents };
    },

    /** Takes back everything a user gave a client: the consent and every token. */
    async revokeClientGrant(userId: string, clientId: string) {
      if (!isUuid(clientId)) throw notFound('Grant');
      return inTransaction(db, async (trx) => {
        const hadConsent = await store.deleteConsent(trx, userId, clientId);
        const ids = await tokens.revokeGrants(trx, { clientId, userId }, 'revoked_by_user');
        if (!hadConsent && ids.length === 0) throw notFound('Grant');
        return { clientId, revoked: true, revokedAt: clock.now().toISOString() };
      });
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
