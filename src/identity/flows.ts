import { conflict, DomainError, forbidden } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { hashPassword, randomDigits, verifyPassword } from '../lib/crypto.js';
import type { Kernel } from '../kernel.js';
import type { OneTimeTokens } from './one-time-tokens.js';
import {
  confirmationMail,
  emailChangeMail,
  emailChangeNoticeMail,
  passwordChangedMail,
  recoveryMail,
} from './mails.js';
import * as store from './store.js';
import { normalizeEmail } from './email.js';
import { RESERVED_USERNAMES } from './schemas.js';
import type { UserRow } from './store.js';

const CONFIRMATION_TTL_SEC = 24 * 3600;
const RECOVERY_CODE_TTL_SEC = 15 * 60;
const RESET_TOKEN_TTL_SEC = 15 * 60;
/** Wrong guesses a recovery code survives; the route's rate limit bounds guesses per caller too. */
const RECOVERY_CODE_MAX_ATTEMPTS = 5;
export const USER_CHANGED_TOPIC = 'identity.user-changed';

/** The one answer for a one-time secret that is unknown, used or expired (nothing tells them apart). */
const invalidSecret = (what: string) =>
  new DomainError('GONE', `This ${what} is invalid, already used or expired; ask for a new one`);

/**
 * A recovery code that did not work: mistyped (it still works, until its tries are spent), used,
 * expired, or for an unknown email (nothing tells them apart).
 */
const wrongCode = () =>
  new DomainError(
    'GONE',
    `This code does not match, or it was used or has expired. A code works once, for 15 minutes; after ${RECOVERY_CODE_MAX_ATTEMPTS} wrong tries it stops working and a new one is needed`,
  );

export interface FlowDeps {
  kernel: Kernel;
  tokens: OneTimeTokens;
  /** A password hash to verify against when the email is unknown (keeps timings alike). */
  decoyHash(): Promise<string>;
  createUserRow(
    input: {
      email: string;
      passwordHash: string | null;
      fullName?: string | null;
      username?: string | null;
      verified?: boolean;
    },
    executor: Executor,
  ): Promise<UserRow>;
  /** Ends what the user's earlier sign-ins opened: sessions, pending secrets, third-party grants. */
  endSignIns: EndSignIns;
}

export type EndSignIns = (
  trx: Executor,
  userId: string,
  reason: string,
  options?: { exceptSessionId?: string | null; forgetConsents?: boolean },
) => Promise<number>;

/**
 * The self-service flows of the sign-in API (docs/interface.md, Sign-in API): registration and email
 * confirmation, password recovery by an emailed code, and the signed-in user's changes.
 * Mail is queued in the same transaction as the secret it carries, then delivered after commit.
 */
export function createAccountFlows(deps: FlowDeps) {
  const { kernel, tokens } = deps;
  const { db, clock, mailer, config, changes } = kernel;
  const deliver = () => void mailer.deliverPending();

  async function issueConfirmation(trx: Executor, user: UserRow): Promise<void> {
    const { secret } = await tokens.issue(trx, {
      userId: user.id,
      purpose: 'email_confirmation',
      ttlSec: CONFIRMATION_TTL_SEC,
      replacePrevious: true,
    });
    await mailer.enqueue(trx, confirmationMail(config, user.email, secret));
  }

  async function userChanged(trx: Executor, userId: string): Promise<void> {
    await changes.publish(trx, USER_CHANGED_TOPIC, userId);
  }

  return {
    /** A new user with a password; their email stays unconfirmed until the mailed link is used. */
    async register(input: {
      email: string;
      password: string;
      fullName?: string | null;
      username?: string | null;
    }): Promise<UserRow> {
      // scrypt runs before the transaction: it must never hold the one connection.
      const passwordHash = await hashPassword(input.password, config.scryptCost);
      const user = await inTransaction(db, async (trx) => {
        const row = await deps.createUserRow(
          { email: input.email, passwordHash, fullName: input.fullName, username: input.username },
          trx,
        );
        await issueConfirmation(trx, row);
        return row;
      });
      deliver();
      return user;
    },

    /**
     * Confirms an address: either a new user's own (email_confirmation) or the new address
     * of an email change (email_change), which takes effect only now.
     */
    async confirmEmail(secret: string): Promise<UserRow> {
      return inTransaction(db, async (trx) => {
        const nowIso = clock.now().toISOString();
        const confirmation = await tokens.consume(trx, 'email_confirmation', secret);
        if (confirmation?.userId) {
          const user = await store.findUserById(trx, confirmation.userId);
          if (!user) throw invalidSecret('confirmation link');
          if (!user.email_verified_at)
            await store.updateUser(trx, user.id, { email_verified_at: nowIso, updated_at: nowIso });
          await userChanged(trx, user.id);
          return { ...user, email_verified_at: user.email_verified_at ?? nowIso };
        }
        const change = await tokens.consume(trx, 'email_change', secret);
        // A change requested before the canonical form carries the old form: stored canonical.
        const newEmail = typeof change?.payload.newEmail === 'string' ? normalizeEmail(change.payload.newEmail) : null;
        if (!change?.userId || !newEmail) throw invalidSecret('confirmation link');
        const user = await store.findUserById(trx, change.userId);
        if (!user) throw invalidSecret('confirmation link');
        const holder = await store.findUserByEmail(trx, newEmail);
        if (holder && holder.id !== user.id) throw conflict('This email address is now used by another account');
        await store.updateUser(trx, user.id, { email: newEmail, email_verified_at: nowIso, updated_at: nowIso });
        await tokens.retireAll(trx, user.id, 'password_recovery_code');
        await tokens.retireAll(trx, user.id, 'password_reset');
        await userChanged(trx, user.id);
        return { ...user, email: newEmail, email_verified_at: nowIso, updated_at: nowIso };
      });
    },

    /** Mails a new confirmation link to an unconfirmed user; silent for anything else. */
    async resendConfirmation(email: string): Promise<void> {
      await inTransaction(db, async (trx) => {
        const user = await store.findUserByEmail(trx, email);
        if (!user || user.email_verified_at) return tokens.issueDecoy(trx, 'email_confirmation', CONFIRMATION_TTL_SEC);
        await issueConfirmation(trx, user);
      });
      deliver();
    },

    /** Mails a one-time numeric code (and a reset page link); silent when the email is unknown. */
    async forgotPassword(email: string): Promise<void> {
      await inTransaction(db, async (trx) => {
        const user = await store.findUserByEmail(trx, email);
        if (!user) return tokens.issueDecoy(trx, 'password_recovery_code', RECOVERY_CODE_TTL_SEC);
        const { secret: code } = await tokens.issueCode(trx, {
          userId: user.id,
          purpose: 'password_recovery_code',
          ttlSec: RECOVERY_CODE_TTL_SEC,
          code: randomDigits(6),
        });
        await mailer.enqueue(trx, recoveryMail(config, user.email, code));
      });
      deliver();
    },

    /** Trades the emailed code for a short-lived reset token. Wrong guesses burn the code. */
    async exchangeRecoveryCode(email: string, code: string): Promise<{ resetToken: string; expiresIn: number }> {
      const outcome = await inTransaction(db, async (trx) => {
        const user = await store.findUserByEmail(trx, email);
        if (!user) return null;
        const used = await tokens.consumeCode(trx, user.id, 'password_recovery_code', code, RECOVERY_CODE_MAX_ATTEMPTS);
        if (!used) return null;
        const { secret } = await tokens.issue(trx, {
          userId: user.id,
          purpose: 'password_reset',
          ttlSec: RESET_TOKEN_TTL_SEC,
          replacePrevious: true,
        });
        return secret;
      });
      if (!outcome) throw wrongCode();
      return { resetToken: outcome, expiresIn: RESET_TOKEN_TTL_SEC };
    },

    /**
     * Sets a new password with a reset token. Every session and every third-party grant of
     * the user ends (docs/kernel.md, Password changes); on an account that was not confirmed yet,
     * the remembered consents go too: they were given by whoever knew the old password.
     */
    async resetPassword(resetToken: string, password: string): Promise<UserRow> {
      const passwordHash = await hashPassword(password, config.scryptCost);
      const user = await inTransaction(db, async (trx) => {
        const used = await tokens.consume(trx, 'password_reset', resetToken);
        if (!used?.userId) throw invalidSecret('reset token');
        const row = await store.findUserById(trx, used.userId);
        if (!row) throw invalidSecret('reset token');
        const nowIso = clock.now().toISOString();
        // The code reached the mailbox: that confirms the address as well.
        const patch = {
          password_hash: passwordHash,
          email_verified_at: row.email_verified_at ?? nowIso,
          updated_at: nowIso,
        };
        await store.updateUser(trx, row.id, patch);
        await deps.endSignIns(trx, row.id, 'password_reset', { forgetConsents: !row.email_verified_at });
        await mailer.enqueue(trx, passwordChangedMail(config, row.email));
        await userChanged(trx, row.id);
        return { ...row, ...patch };
      });
      deliver();
      return user;
    },

    /**
     * Changes the password of a signed-in user who knows the current one. Every other session
     * and every third-party grant ends (a change is what one does after a suspected leak); the
     * caller's own session stays.
     */
    async changePassword(
      userId: string,
      currentSessionId: string | null,
      currentPassword: string,
      newPassword: string,
    ): Promise<{ endedSessions: number }> {
      const user = await store.findUserById(db, userId);
      if (!user) throw forbidden();
      const ok = await verifyPassword(currentPassword, user.password_hash ?? (await deps.decoyHash()));
      if (!user.password_hash || !ok)
        throw new DomainError('FORBIDDEN', 'The current password is wrong', [
          { field: 'currentPassword', message: 'wrong password' },
        ]);
      const passwordHash = await hashPassword(newPassword, config.scryptCost);
      const ended = await inTransaction(db, async (trx) => {
        const nowIso = clock.now().toISOString();
        await store.updateUser(trx, userId, { password_hash: passwordHash, updated_at: nowIso });
        const count = await deps.endSignIns(trx, userId, 'password_changed', { exceptSessionId: currentSessionId });
        await mailer.enqueue(trx, passwordChangedMail(config, user.email));
        await userChanged(trx, userId);
        return count;
      });
      deliver();
      return { endedSessions: ended };
    },

    /** Starts an email change: the password proves it is the owner, the new address confirms. */
    async requestEmailChange(userId: string, newEmail: string, password: string): Promise<void> {
      const user = await store.findUserById(db, userId);
      if (!user) throw forbidden();
      const ok = await verifyPassword(password, user.password_hash ?? (await deps.decoyHash()));
      if (!user.password_hash || !ok)
        throw new DomainError('FORBIDDEN', 'The password is wrong', [{ field: 'password', message: 'wrong password' }]);
      if (newEmail === user.email) throw conflict('This is already your email address');
      await inTransaction(db, async (trx) => {
        if (await store.findUserByEmail(trx, newEmail)) throw conflict('This email address is used by another account');
        const { secret } = await tokens.issue(trx, {
          userId,
          purpose: 'email_change',
          ttlSec: CONFIRMATION_TTL_SEC,
          payload: { newEmail },
          replacePrevious: true,
        });
        await mailer.enqueue(trx, emailChangeMail(config, newEmail, secret));
        await mailer.enqueue(trx, emailChangeNoticeMail(config, user.email, newEmail));
      });
      deliver();
    },

    /** Whether a username can be claimed (well-formed, not reserved, not taken). */
    async usernameAvailable(username: string, forUserId: string | null = null): Promise<boolean> {
      if (RESERVED_USERNAMES.has(username)) return false;
      const holder = await store.findUserByUsername(db, username);
      return !holder || holder.id === forUserId;
    },

    /** Sets (or changes) the caller's username. */
    async claimUsername(userId: string, username: string): Promise<UserRow> {
      if (RESERVED_USERNAMES.has(username)) throw conflict('This username is reserved');
      return inTransaction(db, async (trx) => {
        const holder = await store.findUserByUsername(trx, username);
        if (holder && holder.id !== userId) throw conflict('This username is taken');
        const user = await store.findUserById(trx, userId);
        if (!user) throw forbidden();
        const nowIso = clock.now().toISOString();
        await store.updateUser(trx, userId, { username, updated_at: nowIso });
        await userChanged(trx, userId);
        return { ...user, username, updated_at: nowIso };
      });
    },
  };
}
