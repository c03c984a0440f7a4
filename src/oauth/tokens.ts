import { LRUCache } from 'lru-cache';
import type { BearerVerifier, Principal } from '../http/auth.js';
import { afterCommit, type Executor } from '../db/tx.js';
import { DomainError } from '../http/errors.js';
import { randomTokenSource, sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { JwtCodec } from '../lib/jwt.js';
import type { Kernel } from '../kernel.js';
import * as store from './store/index.js';
import { AccessTokenSigner } from './access-token-signer.js';
import { createHotStore } from './hot-store.js';
import { type ResourceKind, resourceUrl } from './resources.js';

/** RFC 9068 access tokens: `typ: at+jwt`, HS256, one hour (docs/interface.md, Authentication 6). */
const ACCESS_TOKEN_TYP = 'at+jwt';
const ACCESS_TOKEN_TTL_SEC = 3600;
const REFRESH_TOKEN_TTL_SEC = 30 * 24 * 3600;
/** Key `grant:ID`, `jti:ID`, or null for "forget everything". */
const REVOKED_TOPIC = 'oauth.revoked';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** A token response without a refresh token (an ID-JAG's: grants/jwt-bearer.ts). */
export type AccessTokenResponse = Omit<TokenResponse, 'refresh_token'>;

export interface AccessTokenClaims {
  sub: string;
  clientId: string;
  scopes: string[];
  jti: string;
  grantId: string;
  exp: number;
  /** The resource of its `aud` (RFC 8707). */
  resource: ResourceKind;
  /** The workspace an MCP grant exposes (claim `workspace_id`); null otherwise. */
  workspaceId: string | null;
}

/** A refresh token's stored row: only its hash is kept. */
export interface RefreshTokenRow {
  grant_id: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
}

/** A refresh token made before its grant is known: the token, and its row but for the grant. */
export interface FreshRefreshToken {
  token: string;
  row: Omit<RefreshTokenRow, 'grant_id'>;
}

/** The grant a token is minted in, with what its tokens are for. */
export interface GrantRef {
  id: string;
  clientId: string;
  userId: string;
  resource: ResourceKind;
  workspaceId: string | null;
}

/**
 * Minting and checking OAuth access tokens. They are stateless JWTs, yet revocation is
 * immediate (docs/interface.md, OAuth): each use checks the token's grant and jti through two small caches
 * that revocation clears here at once and in other processes through the change feed.
 */
export function createTokens(kernel: Kernel) {
  const { db, clock, jwt, changes, config, secrets } = kernel;
  const signer = new AccessTokenSigner(secrets.jwtSigningKey);
  const hot = createHotStore(kernel.db, kernel.sqlite);
  // Refresh tokens are made on every refresh: drawn from a block of random bytes.
  const randomToken = randomTokenSource();
  const audiences: Record<ResourceKind, string> = {
    api: resourceUrl(config.publicUrl, 'api'),
    mcp: resourceUrl(config.publicUrl, 'mcp'),
  };
  const grantActive = new LRUCache<string, boolean>({ max: 10_000, ttl: 30_000 });
  const jtiRevoked = new LRUCache<string, boolean>({ max: 10_000, ttl: 30_000 });

  changes.subscribe(REVOKED_TOPIC, (key) => {
    if (!key) {
      grantActive.clear();
      jtiRevoked.clear();
    } else if (key.startsWith('grant:')) grantActive.delete(key.slice(6));
    else if (key.startsWith('jti:')) jtiRevoked.delete(key.slice(4));
  });

  async function isGrantActive(grantId: string): Promise<boolean> {
    const hit = grantActive.get(grantId);
    if (hit !== undefined) return hit;
    const grant = await store.findGrant(db, grantId);
    const active = !!grant && grant.revoked_at === null;
    grantActive.set(grantId, active);
    return active;
  }

  async function isJtiRevoked(jti: string): Promise<boolean> {
    const hit = jtiRevoked.get(jti);
    if (hit !== undefined) return hit;
    const revoked = !!(await store.findRevokedJti(db, jti));
    jtiRevoked.set(jti, revoked);
    return revoked;
  }

  /**
   * Verifies an access token of either resource and its revocation state; null when it is not
   * a live one. Each resource then refuses the other's tokens: verifyAccessToken below for the
   * REST API, mcp-auth.ts for the MCP endpoint.
   */
  async function readAccessToken(token: string): Promise<AccessTokenClaims | null> {
    const verified = await jwt.verify(token, ACCESS_TOKEN_TYP);
    if (!verified) return null;
    const p = verified.payload;
    const resource = p.aud === audiences.api ? 'api' : p.aud === audiences.mcp ? 'mcp' : null;
    if (
      resource === null ||
      typeof p.client_id !== 'string' ||
      typeof p.jti !== 'string' ||
      typeof p.gid !== 'string' ||
      typeof p.scope !== 'string'
    )
      return null;
    if (!(await isGrantActive(p.gid)) || (await isJtiRevoked(p.jti))) return null;
    return {
      sub: String(p.sub),
      clientId: p.client_id,
      scopes: p.scope.split(' '),
      jti: p.jti,
      grantId: p.gid,
      exp: Number(p.exp),
      resource,
      workspaceId: typeof p.workspace_id === 'string' ? p.workspace_id : null,
    };
  }

  /** A live access token for the REST API (userinfo and the kernel's bearer auth); null otherwise. */
  async function verifyAccessToken(token: string): Promise<AccessTokenClaims | null> {
    const claims = await readAccessToken(token);
    return claims?.resource === 'api' ? claims : null;
  }

  const verifier: BearerVerifier = {
    name: 'oauth',
    async verify(token) {
      const claims = await readAccessToken(token);
      if (!claims) return JwtCodec.peekTyp(token) === ACCESS_TOKEN_TYP ? null : undefined;
      // A live token for the MCP endpoint: refused, and told why, so a client that sent it here
      // by mistake knows to ask for a REST API token (docs/oauth.md, Audiences).
      if (claims.resource !== 'api') {
        const message = `This access token is for the MCP endpoint (${audiences.mcp}); the REST API accepts only tokens for ${audiences.api}`;
        throw new DomainError('UNAUTHORIZED', message, undefined, {
          'WWW-Authenticate': `Bearer error="invalid_token", error_description="${message}"`,
        });
      }
      const principal: Principal = {
        userId: claims.sub,
        kind: 'oauth',
        scopes: claims.scopes,
        clientId: claims.clientId,
        sessionId: null,
        accountId: null,
        tokenId: claims.jti,
      };
      return principal;
    },
  };

  async function forgetGrant(executor: Executor, grantId: string): Promise<void> {
    // Once it commits: a transaction rolled back (or retried) has not revoked anything yet.
    afterCommit(executor, () => grantActive.set(grantId, false));
    await changes.publish(executor, REVOKED_TOPIC, `grant:${grantId}`);
  }

  function newRefreshToken(now: Date = clock.now()): FreshRefreshToken {
    const token = randomToken(32);
    return {
      token,
      row: {
        token_hash: sha256Hex(token),
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + REFRESH_TOKEN_TTL_SEC * 1000).toISOString(),
      },
    };
  }

  function accessResponse(grant: GrantRef, scopes: string): AccessTokenResponse {
    const iat = Math.floor(clock.now().getTime() / 1000);
    const accessToken = signer.sign({
      iss: config.publicUrl,
      sub: grant.userId,
      aud: audiences[grant.resource],
      client_id: grant.clientId,
      scope: scopes,
      jti: newId(),
      gid: grant.id,
      ...(grant.workspaceId === null ? {} : { workspace_id: grant.workspaceId }),
      iat,
      exp: iat + ACCESS_TOKEN_TTL_SEC,
    });
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SEC,
      scope: scopes,
    };
  }

  function respond(grant: GrantRef, scopes: string, refreshToken: string): TokenResponse {
    const { scope, ...rest } = accessResponse(grant, scopes);
    return { ...rest, refresh_token: refreshToken, scope };
  }

  return {
    verifier,
    readAccessToken,
    verifyAccessToken,
    isGrantActive,

    hot,

    /**
     * A new refresh token and what stores it, its grant aside: made before the statement that
     * stores it, where that statement also finds the grant (grants/refresh-token.ts).
     */
    newRefreshToken,

    /** The token response in a grant: a new access token, and the refresh token given. */
    respond,

    /** An access token alone in a grant (an ID-JAG's: no refresh token). */
    respondWithoutRefresh: accessResponse,

    /**
     * A new access token and refresh token in a grant (family). Synchronous apart from the
     * insert, so the refresh hot path can run it inside a better-sqlite3 transaction.
     */
    mint(grant: GrantRef, scopes: string, insert: (row: RefreshTokenRow) => void): TokenResponse {
      const fresh = newRefreshToken();
      insert({ grant_id: grant.id, ...fresh.row });
      return respond(grant, scopes, fresh.token);
    },

    /** The same, inside a kysely transaction. */
    async issue(executor: Executor, grant: GrantRef, scopes: string): Promise<TokenResponse> {
      const rows: Array<Parameters<typeof store.insertRefreshToken>[1]> = [];
      const response = this.mint(grant, scopes, (row) => rows.push({ ...row, consumed_at: null }));
      for (const row of rows) await store.insertRefreshToken(executor, row);
      return response;
    },

    /** Ends a grant: its refresh tokens and every access token issued from it. */
    async revokeGrant(executor: Executor, grantId: string, reason: string): Promise<boolean> {
      const changed = await store.revokeGrant(executor, grantId, reason, clock.now().toISOString());
      await forgetGrant(executor, grantId);
      return changed;
    },

    async revokeGrants(
      executor: Executor,
      filter: { clientId: string; userId?: string },
      reason: string,
    ): Promise<string[]> {
      const ids = await store.revokeGrantsOf(executor, filter, reason, clock.now().toISOString());
      for (const id of ids) await forgetGrant(executor, id);
      return ids;
    },

    /** Ends every grant of a user, each with its refresh and access tokens. */
    async revokeAllGrantsOfUser(executor: Executor, userId: string, reason: string): Promise<string[]> {
      const ids = await store.revokeAllGrantsOfUser(executor, userId, reason, clock.now().toISOString());
      for (const id of ids) await forgetGrant(executor, id);
      return ids;
    },

    /** Ends one access token (RFC 7009), leaving its grant alone. */
    async revokeAccessToken(executor: Executor, claims: AccessTokenClaims): Promise<void> {
      await store.insertRevokedJti(executor, {
        jti: claims.jti,
        grant_id: claims.grantId,
        expires_at: new Date(claims.exp * 1000).toISOString(),
        created_at: clock.now().toISOString(),
      });
      jtiRevoked.set(claims.jti, true);
      await changes.publish(executor, REVOKED_TOPIC, `jti:${claims.jti}`);
    },
  };
}

export type OAuthTokens = ReturnType<typeof createTokens>;
