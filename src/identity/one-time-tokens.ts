import type { Executor } from '../db/tx.js';
import type { Clock } from '../lib/clock.js';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import {
  consumeOneTimeToken,
  findLatestLiveOneTimeToken,
  findOneTimeToken,
  insertOneTimeToken,
  recordOneTimeTokenAttempt,
  retireOneTimeTokens,
} from './store.js';

export type OneTimePurpose =
  | 'magic_link'
  | 'email_confirmation'
  | 'password_recovery_code'
  | 'password_reset'
  | 'email_change'
  | (string & {});

export interface IssuedSecret {
  id: string;
  secret: string;
}

export interface ConsumedSecret {
  id: string;
  userId: string | null;
  payload: Record<string, unknown>;
}

interface SecretRow {
  id: string;
  user_id: string | null;
  payload: string | null;
}

/** The row of a secret that is still usable (known, unused, unexpired), else null. */
async function findLive(
  executor: Executor,
  purpose: OneTimePurpose,
  secret: string,
  nowIso: string,
): Promise<SecretRow | null> {
  const row = await findOneTimeToken(executor, purpose, sha256Hex(`${purpose}:${secret}`));
  return row && row.consumed_at === null && row.expires_at > nowIso ? row : null;
}

const present = (row: SecretRow): ConsumedSecret => ({
  id: row.id,
  userId: row.user_id,
  payload: row.payload ? (JSON.parse(row.payload) as Record<string, unknown>) : {},
});

/**
 * Emailed single-use secrets: only their SHA-256 is stored, each expires, and consuming one
 * is a conditional update, so of two racing uses exactly one wins.
 */
export function createOneTimeTokens(clock: Clock) {
  return {
    async issue(
      executor: Executor,
      input: {
        userId: string | null;
        purpose: OneTimePurpose;
        ttlSec: number;
        payload?: Record<string, unknown>;
        secret?: string;
        replacePrevious?: boolean;
      },
    ): Promise<IssuedSecret> {
      const now = clock.now();
      if (input.replacePrevious && input.userId) {
        // A new link or code supersedes the unused ones of the same purpose.
        await retireOneTimeTokens(executor, input.userId, input.purpose, now.toISOString());
      }
      const secret = input.secret ?? randomToken();
      const id = newId();
      await insertOneTimeToken(executor, {
        id,
        user_id: input.userId,
        purpose: input.purpose,
        token_hash: sha256Hex(`${input.purpose}:${secret}`),
        payload: input.payload ? JSON.stringify(input.payload) : null,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + input.ttlSec * 1000).toISOString(),
        consumed_at: null,
        attempts: 0,
      });
      return { id, secret };
    },

    /** Looks a secret up without using it: null when unknown, already used or expired. */
    async peek(executor: Executor, purpose: OneTimePurpose, secret: string): Promise<ConsumedSecret | null> {
      const row = await findLive(executor, purpose, secret, clock.now().toISOString());
      return row && present(row);
    },

    /** Uses up a secret: null when unknown, already used or expired. */
    async consume(executor: Executor, purpose: OneTimePurpose, secret: string): Promise<ConsumedSecret | null> {
      const nowIso = clock.now().toISOString();
      const row = await findLive(executor, purpose, secret, nowIso);
      if (!row) return null;
      if (!(await consumeOneTimeToken(executor, row.id, nowIso))) return null;
      return present(row);
    },

    /** Counts a wrong answer against a secret (a second step's code); the `maxAttempts`-th burns it. */
    async recordAttempt(executor: Executor, id: string, maxAttempts: number): Promise<void> {
      await recordOneTimeTokenAttempt(executor, id, maxAttempts, clock.now().toISOString());
    },

    /** Uses up a secret found by `peek`: false when another use won the race or it was burnt meanwhile. */
    async consumeById(executor: Executor, id: string): Promise<boolean> {
      return consumeOneTimeToken(executor, id, clock.now().toISOString());
    },

    /**
     * Checks a short code a person types (a recovery code) against the user's one live secret
     * of that purpose. Every wrong guess counts; at `maxAttempts` the secret is burnt, so a
     * 6-digit code gives an attacker at most maxAttempts chances in 10^6 per mail.
     */
    async consumeCode(
      executor: Executor,
      userId: string,
      purpose: OneTimePurpose,
      code: string,
      maxAttempts: number,
    ): Promise<ConsumedSecret | null> {
      const nowIso = clock.now().toISOString();
      const row = await findLatestLiveOneTimeToken(executor, userId, purpose, nowIso);
      if (!row) return null;
      if (!safeEqual(row.token_hash, sha256Hex(`${purpose}:${userId}:${code}`))) {
        await recordOneTimeTokenAttempt(executor, row.id, maxAttempts, nowIso);
        return null;
      }
      if (!(await consumeOneTimeToken(executor, row.id, nowIso))) return null;
      return {
        id: row.id,
        userId: row.user_id,
        payload: row.payload ? (JSON.parse(row.payload) as Record<string, unknown>) : {},
      };
    },

    /** Issues a short code for a user; stored hashed with the user id, so equal codes never collide. */
    async issueCode(
      executor: Executor,
      input: { userId: string; purpose: OneTimePurpose; ttlSec: number; code: string },
    ): Promise<IssuedSecret> {
      const issued = await this.issue(executor, {
        userId: input.userId,
        purpose: input.purpose,
        ttlSec: input.ttlSec,
        secret: `${input.userId}:${input.code}`,
        replacePrevious: true,
      });
      return { id: issued.id, secret: input.code };
    },

    /**
     * Writes a secret nobody can use (no user; the value is thrown away) for an email that is
     * unknown. Answering "sent if known" after the same write as for a known email keeps the
     * two answers alike in time: an answer without any write was measurably faster. The purge
     * job removes these rows with the expired ones.
     */
    async issueDecoy(executor: Executor, purpose: OneTimePurpose, ttlSec: number): Promise<void> {
      await this.issue(executor, { userId: null, purpose, ttlSec });
    },

    /** Retires every unused secret of a purpose for a user (after a reset, say). */
    async retireAll(executor: Executor, userId: string, purpose: OneTimePurpose): Promise<void> {
      await retireOneTimeTokens(executor, userId, purpose, clock.now().toISOString());
    },
  };
}

export type OneTimeTokens = ReturnType<typeof createOneTimeTokens>;
