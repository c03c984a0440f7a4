import { LRUCache } from 'lru-cache';
import { DomainError, notFound } from '../http/errors.js';
import type { BearerVerifier, Principal } from '../http/auth.js';
import { inTransaction } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { JwtCodec } from '../lib/jwt.js';
import type { Kernel } from '../kernel.js';
import * as store from './store.js';

/** First-party session access tokens: HS256 JWTs of this typ (OAuth access tokens are at+jwt). */
const SESSION_TOKEN_TYP = 'session+jwt';
const SESSION_ACCESS_TTL_SEC = 3600;
const SESSION_REFRESH_TTL_SEC = 30 * 24 * 3600;
const SESSION_REVOKED_TOPIC = 'identity.session-revoked';

export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  sessionId: string;
}

/** Where a sign-in came from, and whether it proved a second factor (docs/identity.md, Sessions). */
export interface SignInContext {
  userAgent?: string | null;
  ip?: string | null;
  factorVerified?: boolean;
}

const invalidRefresh = () =>
  new DomainError('UNAUTHORIZED', 'The refresh token is invalid, expired or revoked; sign in again');

/**
 * Sessions are refresh-token families. Every refresh rotates the token; presenting a consumed
 * one revokes the whole family (stolen-token detection), and with it the family's access
 * tokens, which every request checks through a small cache that revocation clears.
 */
export function createSessions(kernel: Kernel) {
  const { db, clock, jwt, changes } = kernel;
  // sessionId -> still active? Cleared on revocation (here at once, elsewhere via the change feed).
  const activeCache = new LRUCache<string, boolean>({ max: 10_000, ttl: 10_000 });
  changes.subscribe(SESSION_REVOKED_TOPIC, (sessionId) =>
    sessionId ? activeCache.delete(sessionId) : activeCache.clear(),
  );

  async function mint(sessionId: string, userId: string, executor = db): Promise<SessionTokens> {
    const now = clock.now();
    const refreshToken = randomToken();
    await store.insertRefreshToken(executor, {
      id: newId(),
      session_id: sessionId,
      token_hash: sha256Hex(refreshToken),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + SESSION_REFRESH_TTL_SEC * 1000).toISOString(),
    });
    const accessToken = await jwt.sign(
      { sub: userId, sid: sessionId, jti: newId() },
      { typ: SESSION_TOKEN_TYP, expiresInSec: SESSION_ACCESS_TTL_SEC },
    );
    return { accessToken, refreshToken, tokenType: 'Bearer', expiresIn: SESSION_ACCESS_TTL_SEC, sessionId };
  }

  async function revoke(
    executor: Parameters<typeof store.revokeSession>[0],
    sessionId: string,
    reason: string,
  ): Promise<void> {
    await store.revokeSession(executor, sessionId, reason, clock.now().toISOString());
    activeCache.delete(sessionId);
    await changes.publish(executor, SESSION_REVOKED_TOPIC, sessionId);
  }

  function newSession(userId: string, context: SignInContext): store.NewSession {
    const now = clock.now().toISOString();
    return {
      id: newId(),
      user_id: userId,
      created_at: now,
      // Shown back to the user only; bounded so a forged header cannot bloat the row.
      user_agent: context.userAgent ? context.userAgent.slice(0, 300) : null,
      ip: context.ip ?? null,
      factor_verified_at: context.factorVerified ? now : null,
    };
  }

  async function isActive(sessionId: string): Promise<boolean> {
    const cached = activeCache.get(sessionId);
    if (cached !== undefined) return cached;
    const session = await store.findSession(db, sessionId);
    const active = !!session && session.revoked_at === null;
    activeCache.set(sessionId, active);
    return active;
  }

  // token -> its (frozen) principal and expiry: a hot token costs two map lookups, no
  // signature check and no allocation. Revocation is still checked on every use (activeCache).
  const principals = new LRUCache<string, { principal: Principal; expMs: number }>({
    max: 10_000,
    ttl: SESSION_ACCESS_TTL_SEC * 1000,
  });

  const verifier: BearerVerifier = {
    name: 'session',
    verify(token) {
      const entry = principals.get(token);
      if (entry !== undefined) {
        if (entry.expMs <= clock.now().getTime()) return null;
        const active = activeCache.get(entry.principal.sessionId!);
        if (active !== undefined) return active ? entry.principal : null;
      }
      return verifySlowly(token, entry);
    },
    cached(token) {
      const entry = principals.get(token);
      if (entry === undefined || entry.expMs <= clock.now().getTime()) return undefined;
      return activeCache.get(entry.principal.sessionId!) === true ? entry.principal : undefined;
    },
  };

  /** The first sight of a token, or of its session since the cache forgot it. */
  async function verifySlowly(
    token: string,
    cached: { principal: Principal; expMs: number } | undefined,
  ): Promise<Principal | null | undefined> {
    let entry = cached;
    if (entry === undefined) {
      const verified = await jwt.verify(token, SESSION_TOKEN_TYP);
      if (!verified) {
        // Not a session token at all: let the next verifier look at it.
        return JwtCodec.peekTyp(token) === SESSION_TOKEN_TYP ? null : undefined;
      }
      const sessionId = String(verified.payload.sid ?? '');
      if (!sessionId) return null;
      const principal: Principal = Object.freeze({
        userId: String(verified.payload.sub),
        kind: 'session',
        scopes: null,
        clientId: null,
        sessionId,
        accountId: null,
        tokenId: String(verified.payload.jti ?? ''),
      });
      entry = { principal, expMs: Number(verified.payload.exp) * 1000 };
      principals.set(token, entry, { ttl: Math.max(1, entry.expMs - clock.now().getTime()) });
    }
    if (entry.expMs <= clock.now().getTime()) return null;
    const sessionId = entry.principal.sessionId!;
    const active = activeCache.get(sessionId) ?? (await isActive(sessionId));
    return active ? entry.principal : null;
  }

  return {
    verifier,
    isActive,

    /** A session without API tokens (the OAuth pages' browser sign-in stands on one). */
    async open(userId: string, context: SignInContext = {}): Promise<string> {
      const row = newSession(userId, context);
      await store.insertSession(db, row);
      return row.id;
    },

    /** A new session for a user who has just proved who they are. */
    async start(userId: string, context: SignInContext = {}): Promise<SessionTokens> {
      const row = newSession(userId, context);
      return inTransaction(db, async (trx) => {
        await store.insertSession(trx, row);
        return mint(row.id, userId, trx);
      });
    },

    /** Rotates a refresh token. Reuse of a consumed one revokes the family, then refuses. */
    async refresh(refreshToken: string): Promise<SessionTokens & { userId: string }> {
      const outcome = await inTransaction(db, async (trx) => {
        const row = await store.findRefreshToken(trx, sha256Hex(refreshToken));
        if (!row || row.revoked_at !== null) return null;
        const nowIso = clock.now().toISOString();
        if (row.consumed_at !== null || !(await store.consumeRefreshToken(trx, row.id, nowIso))) {
          await revoke(trx, row.session_id, 'refresh_token_reuse');
          return null;
        }
        if (row.expires_at <= nowIso) return null;
        await store.touchSession(trx, row.session_id, nowIso);
        return { ...(await mint(row.session_id, row.user_id, trx)), userId: row.user_id };
      });
      if (!outcome) throw invalidRefresh();
      return outcome;
    },

    /** Ends the session a refresh token belongs to, if it is the caller's. */
    async endByRefreshToken(userId: string, refreshToken: string): Promise<void> {
      await inTransaction(db, async (trx) => {
        const row = await store.findRefreshToken(trx, sha256Hex(refreshToken));
        if (!row || row.user_id !== userId) throw invalidRefresh();
        await revoke(trx, row.session_id, 'logout');
      });
    },

    revoke,

    /** The user's sessions that can still be used, most recently used first (docs/identity.md, Sessions). */
    async listLive(userId: string, currentSessionId: string | null) {
      const rows = await store.listLiveSessions(db, userId, clock.now().toISOString());
      return rows.map((r) => ({
        id: r.id,
        current: r.id === currentSessionId,
        createdAt: r.created_at,
        lastUsedAt: r.last_used_at,
        userAgent: r.user_agent,
        ip: r.ip,
      }));
    },

    /** Ends one of the user's own sessions (its refresh tokens, access tokens and browser sign-ins); 404 for anyone else's. */
    async endOwn(userId: string, sessionId: string): Promise<void> {
      await inTransaction(db, async (trx) => {
        const row = await store.findSession(trx, sessionId);
        if (!row || row.user_id !== userId || row.revoked_at !== null) throw notFound('Session');
        await revoke(trx, sessionId, 'ended_by_user');
      });
    },

    /** Ends every session of a user (password reset or change, a proven mailbox), but `exceptSessionId`; returns how many. */
    async revokeAllOfUser(
      executor: Parameters<typeof store.revokeSession>[0],
      userId: string,
      reason: string,
      exceptSessionId: string | null = null,
    ): Promise<number> {
      const ids = await store.revokeUserSessions(executor, userId, reason, clock.now().toISOString(), exceptSessionId);
      for (const id of ids) {
        activeCache.delete(id);
        await changes.publish(executor, SESSION_REVOKED_TOPIC, id);
      }
      return ids.length;
    },
  };
}
