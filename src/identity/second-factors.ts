import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { inTransaction } from '../db/tx.js';
import { conflict, DomainError } from '../http/errors.js';
import { safeEqual } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { open, seal } from '../lib/sealed.js';
import type { Kernel } from '../kernel.js';
import * as factorStore from './factor-store.js';
import { twoStepOffMail, twoStepOnMail } from './factor-mails.js';
import { SIGN_IN_LIMITS } from './limits.js';
import type { OneTimeTokens } from './one-time-tokens.js';
import type { Passkeys } from './passkeys.js';
import { newRecoveryCodes, recoveryCodeHash, recoveryCodeOf } from './recovery-codes.js';
import * as store from './store.js';
import type { UserRow } from './store.js';
import { matchingStep, newTotpSecret, otpauthUrl, totpCodeOf } from './totp.js';

/** How a second factor is answered (docs/identity.md). */
export type SecondFactorMethod = 'totp' | 'recovery_code' | 'passkey';
/** A code (TOTP or recovery), or a passkey assertion. */
export type FactorAnswer = { code: string } | { passkey: AuthenticationResponseJSON };

/** The pending second step of a sign-in: a one-time secret of this purpose, 5 minutes, 5 wrong answers. */
const SECOND_STEP = 'second_factor';
const SECOND_STEP_TTL_SEC = 5 * 60;
const SECOND_STEP_MAX_ATTEMPTS = 5;
/** docs/identity.md, Step-up: how long a proved factor lets a session approve tool calls. */
const STEP_UP_WINDOW_SEC = 5 * 60;

/** The AAD of a sealed TOTP secret: moved to another user's row, it fails to open. */
export const totpSealContext = (userId: string) => `identity.totp:${userId}`;

const wrongCode = () =>
  new DomainError('FORBIDDEN', 'The code is wrong or was already used', [
    { field: 'code', message: 'wrong or already used code' },
  ]);
const expiredStep = () => new DomainError('UNAUTHORIZED', 'This sign-in has expired or is unknown; sign in again');

export function createSecondFactors(kernel: Kernel, tokens: OneTimeTokens, passkeys: Passkeys) {
  const { db, clock, secrets, config, mailer, limiter } = kernel;

  /**
   * Every code checked for a user counts against one budget whatever the door (sign-in, step-up,
   * turning two-step off): an attacker who has the password cannot spread guesses over doors,
   * sign-ins or addresses (docs/identity.md, Attempts).
   */
  async function chargeAttempt(userId: string): Promise<void> {
    const rule = SIGN_IN_LIMITS.secondFactorPerUser;
    const decision = await limiter.charge(`identity.second-factor|user:${userId}`, rule);
    if (decision.allowed) return;
    const wait = Math.max(1, Math.ceil((decision.resetAt.getTime() - clock.now().getTime()) / 1000));
    throw new DomainError(
      'RATE_LIMIT_EXCEEDED',
      `Too many codes tried for this account; try again in ${Math.ceil(wait / 60)} minute(s)`,
      undefined,
      { 'Retry-After': String(wait) },
    );
  }

  /** A TOTP code (once per time step) or an unused recovery code of a user with two-step sign-in on. */
  async function checkCode(userId: string, raw: string): Promise<SecondFactorMethod | null> {
    await chargeAttempt(userId);
    const row = await factorStore.findTotp(db, userId);
    if (!row?.enabled_at) return null;
    const totp = totpCodeOf(raw);
    if (totp) {
      const secret = open(secrets, row.secret_sealed, totpSealContext(userId));
      const step = matchingStep(secret, totp, clock.now().getTime());
      return step !== null && (await factorStore.claimTotpStep(db, userId, step)) ? 'totp' : null;
    }
    const code = recoveryCodeOf(raw);
    if (!code) return null;
    const used = await factorStore.useRecoveryCode(
      db,
      userId,
      recoveryCodeHash(userId, code),
      clock.now().toISOString(),
    );
    return used ? 'recovery_code' : null;
  }

  async function checkAnswer(userId: string, answer: FactorAnswer): Promise<SecondFactorMethod | null> {
    if ('code' in answer) return checkCode(userId, answer.code);
    await chargeAttempt(userId);
    try {
      await passkeys.authenticate(answer.passkey, userId);
      return 'passkey';
    } catch (err) {
      if (err instanceof DomainError && err.status === 401) return null;
      throw err;
    }
  }

  async function state(userId: string) {
    const counts = await factorStore.factorCounts(db, userId);
    const twoStep = counts.totpEnabledAt !== null;
    const methods: SecondFactorMethod[] = [];
    if (twoStep) methods.push('totp', 'recovery_code');
    if (counts.passkeys > 0 && passkeys.support.available) methods.push('passkey');
    return {
      /** Two-step sign-in (TOTP) is on: every way in asks for a second factor. */
      twoStep,
      twoStepSince: counts.totpEnabledAt,
      passkeys: counts.passkeys,
      recoveryCodesLeft: twoStep ? counts.recoveryCodesLeft : 0,
      /** Something that can prove a second factor (TOTP or a passkey): the step-up rule asks it. */
      hasSecondFactor: twoStep || counts.passkeys > 0,
      methods,
    };
  }

  async function issueRecoveryCodes(userId: string, executor: Parameters<typeof factorStore.replaceRecoveryCodes>[0]) {
    const codes = newRecoveryCodes();
    const now = clock.now().toISOString();
    await factorStore.replaceRecoveryCodes(
      executor,
      userId,
      codes.map((code) => ({
        id: newId(),
        user_id: userId,
        code_hash: recoveryCodeHash(userId, code),
        created_at: now,
        used_at: null,
      })),
    );
    return codes;
  }

  return {
    state,

    /** A new secret for the user's authenticator app; two-step sign-in is on only once a code from it is sent. */
    async setupTotp(user: UserRow): Promise<{ secret: string; otpauthUrl: string }> {
      const current = await factorStore.findTotp(db, user.id);
      if (current?.enabled_at) throw conflict('Two-step sign-in is already on; turn it off first to use another app');
      const secret = newTotpSecret();
      await inTransaction(db, (trx) =>
        factorStore.savePendingTotp(
          trx,
          user.id,
          seal(secrets, secret, totpSealContext(user.id)),
          clock.now().toISOString(),
        ),
      );
      return { secret, otpauthUrl: otpauthUrl(secret, config.brand.name, user.email) };
    },

    /** The pending setup's secret, to show again (the QR code) while the user types the first code. */
    async pendingTotp(user: UserRow): Promise<{ secret: string; otpauthUrl: string } | null> {
      const row = await factorStore.findTotp(db, user.id);
      if (!row || row.enabled_at) return null;
      const secret = open(secrets, row.secret_sealed, totpSealContext(user.id));
      return { secret, otpauthUrl: otpauthUrl(secret, config.brand.name, user.email) };
    },

    /**
     * Turns two-step sign-in on with a first code from the app, and returns ten recovery codes
     * (shown once). The session that did it has just proved the factor.
     */
    async enableTotp(user: UserRow, sessionId: string | null, code: string): Promise<{ recoveryCodes: string[] }> {
      const row = await factorStore.findTotp(db, user.id);
      if (!row) throw conflict('Set up two-step sign-in first (POST /auth/totp/setup)');
      if (row.enabled_at) throw conflict('Two-step sign-in is already on');
      await chargeAttempt(user.id);
      const totp = totpCodeOf(code);
      const secret = open(secrets, row.secret_sealed, totpSealContext(user.id));
      const step = totp ? matchingStep(secret, totp, clock.now().getTime()) : null;
      if (step === null) throw wrongCode();
      const now = clock.now().toISOString();
      const codes = await inTransaction(db, async (trx) => {
        if (!(await factorStore.enableTotp(trx, user.id, step, now))) throw conflict('Two-step sign-in is already on');
        const issued = await issueRecoveryCodes(user.id, trx);
        if (sessionId) await store.markSessionFactorVerified(trx, sessionId, now);
        await mailer.enqueue(trx, twoStepOnMail(config, user.email));
        return issued;
      });
      void mailer.deliverPending();
      return { recoveryCodes: codes };
    },

    /** Turns two-step sign-in off; needs a current code (or a recovery code). The recovery codes go with it. */
    async disableTotp(user: UserRow, code: string): Promise<void> {
      if (!(await state(user.id)).twoStep) throw conflict('Two-step sign-in is not on');
      if (!(await checkCode(user.id, code))) throw wrongCode();
      await inTransaction(db, async (trx) => {
        await factorStore.deleteTotp(trx, user.id);
        await factorStore.deleteRecoveryCodes(trx, user.id);
        await mailer.enqueue(trx, twoStepOffMail(config, user.email));
      });
      void mailer.deliverPending();
    },

    /** Ten new recovery codes in place of the old ones (all of which stop working); needs a current code. */
    async regenerateRecoveryCodes(user: UserRow, code: string): Promise<{ recoveryCodes: string[] }> {
      if (!(await state(user.id)).twoStep) throw conflict('Two-step sign-in is not on');
      if (!(await checkCode(user.id, code))) throw wrongCode();
      return { recoveryCodes: await inTransaction(db, (trx) => issueRecoveryCodes(user.id, trx)) };
    },

    /**
     * After the first factor (a password, a sign-in link) of a user with two-step sign-in on:
     * the token of the pending second step, carrying `payload` (where a page continues).
     */
    async beginSecondStep(userId: string, payload: Record<string, unknown> = {}) {
      const { secret } = await inTransaction(db, (trx) =>
        tokens.issue(trx, { userId, purpose: SECOND_STEP, ttlSec: SECOND_STEP_TTL_SEC, payload }),
      );
      return { mfaToken: secret, methods: (await state(userId)).methods, expiresIn: SECOND_STEP_TTL_SEC };
    },

    /** The user of a live pending second step (to offer their passkeys), or null. */
    async peekSecondStep(mfaToken: string) {
      return tokens.peek(db, SECOND_STEP, mfaToken);
    },

    /**
     * Completes a sign-in's second step: the answer must be right, the token live, of this purpose
     * and (for a page's) of this browser. A wrong answer counts against the token (the fifth burns
     * it) and the user's budget.
     */
    async completeSecondStep(mfaToken: string, answer: FactorAnswer, browser: string | null = null) {
      const pending = await tokens.peek(db, SECOND_STEP, mfaToken);
      if (!pending?.userId) throw expiredStep();
      // A page's second step belongs to the browser that passed the first (its pre-session cookie).
      const boundTo = typeof pending.payload.browser === 'string' ? pending.payload.browser : null;
      if (boundTo !== null && (browser === null || !safeEqual(boundTo, browser))) throw expiredStep();
      const method = await checkAnswer(pending.userId, answer);
      if (!method) {
        await inTransaction(db, (trx) => tokens.recordAttempt(trx, pending.id, SECOND_STEP_MAX_ATTEMPTS));
        throw new DomainError('INVALID_CREDENTIALS', 'The code is wrong or was already used');
      }
      if (!(await inTransaction(db, (trx) => tokens.consumeById(trx, pending.id)))) throw expiredStep();
      return { userId: pending.userId, payload: pending.payload, method };
    },

    /**
     * What the step-up rule asks of a session (docs/identity.md, Step-up): whether the user has a
     * second factor, and whether this session of theirs proved one within STEP_UP_WINDOW_SEC.
     */
    async proofOf(userId: string, sessionId: string | null) {
      const { hasSecondFactor, methods } = await state(userId);
      const session = sessionId ? await store.findSession(db, sessionId) : undefined;
      const live = session && session.user_id === userId && session.revoked_at === null;
      const provenAt = live ? session.factor_verified_at : null;
      const recent = provenAt !== null && Date.parse(provenAt) > clock.now().getTime() - STEP_UP_WINDOW_SEC * 1000;
      return { hasSecondFactor, methods, provenAt, recent };
    },

    /** A session proves a second factor again (a code or a passkey): it may approve for the next 5 minutes. */
    async stepUp(userId: string, sessionId: string | null, answer: FactorAnswer) {
      const session = sessionId ? await store.findSession(db, sessionId) : undefined;
      if (!session || session.user_id !== userId || session.revoked_at !== null)
        throw new DomainError('FORBIDDEN', 'Only a signed-in session can prove a second factor');
      if (!(await state(userId)).hasSecondFactor)
        throw conflict('You have no second factor yet: turn on two-step sign-in or add a passkey');
      if (!(await checkAnswer(userId, answer))) throw wrongCode();
      const now = clock.now();
      await store.markSessionFactorVerified(db, session.id, now.toISOString());
      return {
        factorVerifiedAt: now.toISOString(),
        validUntil: new Date(now.getTime() + STEP_UP_WINDOW_SEC * 1000).toISOString(),
      };
    },
  };
}
