import { badRequest, conflict, DomainError, notFound } from '../http/errors.js';
import { joiDetails } from '../http/validation.js';
import { hashPassword, verifyPassword } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { presentUser } from './presenters.js';
import { createSessions, type SignInContext } from './sessions.js';
import { createPasskeys } from './passkeys.js';
import { createPasskeyAssets, type PasskeyAssets } from './passkey-assets.js';
import * as factorStore from './factor-store.js';
import { factorsResetMail } from './factor-mails.js';
import { createSecondFactors, totpSealContext, type FactorAnswer } from './second-factors.js';
import type { SealedValues } from '../lib/sealed-rotation.js';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { createBrowserSessions } from './browser-sessions.js';
import { createOneTimeTokens } from './one-time-tokens.js';
import { createMagicLinks } from './magic-links.js';
import { createAccountFlows, USER_CHANGED_TOPIC, type EndSignIns } from './flows.js';
import { LRUCache } from 'lru-cache';
import * as store from './store.js';
import { newUserRules, RESERVED_USERNAMES } from './schemas.js';

export interface NewUser {
  email: string;
  password?: string | null;
  /** An already computed hash (callers that hash before opening a transaction). */
  passwordHash?: string | null;
  fullName?: string | null;
  username?: string | null;
  verified?: boolean;
}

/**
 * Something another domain ends when a user's sign-in is reset (the OAuth grants): the
 * composition root registers it, so identity never imports that domain.
 */
export type SignInResetHook = (
  executor: Executor,
  userId: string,
  reason: string,
  options: { forgetConsents: boolean },
) => Promise<unknown>;

export { canonicalEmail, normalizeEmail } from './email.js';

/** Users and their sign-in sessions: the identity every other domain refers to by user id. */
export function createIdentityService(kernel: Kernel) {
  const { db, clock, config } = kernel;
  const sessions = createSessions(kernel);
  const browserSessions = createBrowserSessions(kernel, sessions);
  const oneTimeTokens = createOneTimeTokens(clock);
  const resetHooks: SignInResetHook[] = [];

  /**
   * Ends everything the user's earlier sign-ins opened, in the caller's transaction: sessions
   * (but `exceptSessionId`), the pending emailed secrets (a reset, or an email change that
   * would move the account away) and, through the hooks, third-party grants.
   */
  const endSignIns: EndSignIns = async (trx, userId, reason, options = {}) => {
    const ended = await sessions.revokeAllOfUser(trx, userId, reason, options.exceptSessionId ?? null);
    for (const purpose of ['password_recovery_code', 'password_reset', 'email_change'] as const)
      await oneTimeTokens.retireAll(trx, userId, purpose);
    for (const hook of resetHooks) await hook(trx, userId, reason, { forgetConsents: options.forgetConsents ?? false });
    return ended;
  };

  const magicLinks = createMagicLinks(kernel, oneTimeTokens, endSignIns);
  const passkeys = createPasskeys(kernel, oneTimeTokens);
  const factors = createSecondFactors(kernel, oneTimeTokens, passkeys);
  let passkeyAssets: PasskeyAssets | null = null;

  /**
   * A first factor (password, sign-in link) was right: with two-step sign-in on, the sign-in
   * stops here with 401 MFA_REQUIRED and the token of its second step (docs/identity.md).
   */
  async function requireSecondStep(userId: string, payload: Record<string, unknown> = {}): Promise<void> {
    if (!(await factors.state(userId)).twoStep) return;
    const step = await factors.beginSecondStep(userId, payload);
    throw new DomainError(
      'MFA_REQUIRED',
      'Two-step sign-in is on: send a code from the authenticator app, a recovery code or a passkey with this mfaToken',
      step,
    );
  }
  // Verifying against this when the email is unknown keeps both answers equally slow.
  let decoyHash: Promise<string> | null = null;
  const decoy = () => (decoyHash ??= hashPassword('decoy-password-for-timing', config.scryptCost));

  async function createUser(input: NewUser, executor: Executor = db) {
    // The rules live here, not only in the route schemas, so every caller (the CLI too) obeys them.
    const checked = newUserRules.validate(
      {
        email: input.email,
        password: input.password ?? null,
        username: input.username || null,
        fullName: input.fullName ?? null,
      },
      { abortEarly: false },
    );
    if (checked.error) {
      const details = joiDetails(checked.error.details);
      throw badRequest(details.map((d) => d.message).join('; '), details);
    }
    const email = (checked.value as { email: string }).email;
    const username = input.username ? input.username.trim().toLowerCase() : null;
    if (username && RESERVED_USERNAMES.has(username)) throw conflict('This username is reserved');
    // Hash first: scrypt must not run while a transaction holds the connection.
    const passwordHash =
      input.passwordHash ?? (input.password ? await hashPassword(input.password, config.scryptCost) : null);
    if (await store.findUserByEmail(executor, email)) throw conflict('A user with this email already exists');
    if (username && (await store.findUserByUsername(executor, username))) throw conflict('This username is taken');
    const now = clock.now().toISOString();
    const row = {
      id: newId(),
      email,
      email_verified_at: input.verified ? now : null,
      password_hash: passwordHash,
      full_name: input.fullName ?? null,
      username,
      avatar_url: null,
      created_at: now,
      updated_at: now,
    };
    await store.insertUser(executor, row);
    return row;
  }

  const flows = createAccountFlows({
    kernel,
    tokens: oneTimeTokens,
    decoyHash: decoy,
    endSignIns,
    createUserRow: (input, executor) => createUser(input, executor),
  });

  // The signed-in user's row for hot reads (GET /auth/me): a few seconds at most, and dropped
  // at once when any process changes the user (change feed).
  const userCache = new LRUCache<string, store.UserRow>({ max: 5_000, ttl: 5_000 });
  kernel.changes.subscribe(USER_CHANGED_TOPIC, (userId) => (userId ? userCache.delete(userId) : userCache.clear()));

  return {
    sessions,
    passkeys,
    /** Two-step sign-in, recovery codes and the step-up proof (docs/identity.md). */
    factors,
    /** The passkey pages' script files, read on first use (a CLI command never needs them). */
    passkeyAssets: (): PasskeyAssets => (passkeyAssets ??= createPasskeyAssets()),
    /** The TOTP secrets are sealed: key rotation re-seals them (src/lib/sealed-rotation.ts). */
    sealed: {
      columns: [
        {
          table: 'user_totp',
          keyColumn: 'user_id',
          column: 'secret_sealed',
          contextColumns: [],
          context: (r) => totpSealContext(String(r.user_id)),
        },
      ],
    } satisfies SealedValues,
    /** The pages' sign-in (docs/kernel.md, Pages): a cookie standing on an identity session. */
    browserSessions,
    flows,
    sessionVerifier: sessions.verifier,
    oneTimeTokens,
    magicLinks,
    createUser,
    presentUser,

    /** Sets the user's full name (the account center's profile): one line, 1 to 180 characters. */
    async updateFullName(userId: string, fullName: string): Promise<void> {
      const checked = newUserRules.extract('fullName').required().validate(fullName);
      if (checked.error) throw badRequest(`fullName ${checked.error.message.replace(/^"value" /, '')}`);
      await inTransaction(db, async (trx) => {
        await store.updateUser(trx, userId, {
          full_name: checked.value as string,
          updated_at: clock.now().toISOString(),
        });
        await kernel.changes.publish(trx, USER_CHANGED_TOPIC, userId);
      });
    },

    /**
     * `gantry user reset-second-factors`: for a user who lost their device and their recovery
     * codes (docs/identity.md, A lost device). Two-step sign-in, recovery codes and passkeys go;
     * so does everything the lost device may still hold (sessions, app grants); a notice is mailed.
     */
    async resetSecondFactors(userId: string) {
      const user = await this.getUser(userId);
      const removed = await inTransaction(db, async (trx) => {
        const gone = await factorStore.deleteAllFactors(trx, userId);
        const endedSessions = await endSignIns(trx, userId, 'second_factors_reset');
        await kernel.mailer.enqueue(trx, factorsResetMail(config, user.email));
        return { ...gone, endedSessions };
      });
      void kernel.mailer.deliverPending();
      return removed;
    },

    /** Registers what else ends when a user's sign-in is reset (see SignInResetHook). */
    onSignInReset(hook: SignInResetHook): void {
      resetHooks.push(hook);
    },

    /** What another domain may show of a user (the AI prompt context): names, with updated_at to version them. */
    profile: (userId: string) => store.findUserProfile(db, userId),

    async getUser(id: string, executor: Executor = db) {
      const user = await store.findUserById(executor, id);
      if (!user) throw notFound('User');
      return user;
    },

    /** getUser through the short-lived cache; only for reads that show the user back. */
    getUserCached(id: string): store.UserRow | Promise<store.UserRow> {
      // A hit answers synchronously: this is the hot path of GET /auth/me.
      return (
        userCache.get(id) ??
        store.findUserById(db, id).then((user) => {
          if (!user) throw notFound('User');
          userCache.set(id, user);
          return user;
        })
      );
    },

    findUserById: (id: string, executor: Executor = db) => store.findUserById(executor, id),
    /** For domains that only hold a user id and must check it refers to someone. */
    userExists: (id: string, executor: Executor = db) => store.userExists(executor, id),
    findUserByEmail: (email: string, executor: Executor = db) => store.findUserByEmail(executor, email),
    /** What an operator names a user by: the email (it holds an @, an id never does) or the id. */
    findUserByReference: (ref: string) =>
      ref.includes('@') ? store.findUserByEmail(db, ref) : store.findUserById(db, ref.trim()),

    /** Email + password; one answer for a wrong password and an unknown email, in similar time. */
    async authenticate(email: string, password: string) {
      const user = await store.findUserByEmail(db, email);
      const ok = await verifyPassword(password, user?.password_hash ?? (await decoy()));
      if (!user || !user.password_hash || !ok) throw new DomainError('INVALID_CREDENTIALS', 'Wrong email or password');
      return user;
    },

    /** Signs a user in: a new session with its token pair, or MFA_REQUIRED with two-step sign-in on. */
    async login(email: string, password: string, context: SignInContext = {}) {
      const user = await this.authenticate(email, password);
      await requireSecondStep(user.id);
      const tokens = await sessions.start(user.id, { ...context, factorVerified: false });
      return { ...tokens, user };
    },

    /** The second step of a sign-in (a code, a recovery code or a passkey): the session has proved a second factor. */
    async loginWithSecondFactor(mfaToken: string, answer: FactorAnswer, context: SignInContext = {}) {
      const { userId } = await factors.completeSecondStep(mfaToken, answer);
      const user = await this.getUser(userId);
      return { ...(await sessions.start(user.id, { ...context, factorVerified: true })), user };
    },

    /**
     * A passkey sign-in: user verification made it two factors in one, so it asks for nothing
     * more. With `mfaToken` it answers that sign-in's second step instead.
     */
    async loginWithPasskey(response: AuthenticationResponseJSON, context: SignInContext = {}, mfaToken?: string) {
      if (mfaToken) return this.loginWithSecondFactor(mfaToken, { passkey: response }, context);
      const user = await this.getUser(await passkeys.authenticate(response, null));
      return { ...(await sessions.start(user.id, { ...context, factorVerified: true })), user };
    },

    async refresh(refreshToken: string) {
      const tokens = await sessions.refresh(refreshToken);
      const user = await this.getUser(tokens.userId);
      return { ...tokens, user };
    },

    logout: (userId: string, refreshToken: string) => sessions.endByRefreshToken(userId, refreshToken),

    /** Signs in with a magic link (API form): a new session, like login (MFA_REQUIRED with two-step sign-in on). */
    async loginWithMagicLink(secret: string, context: SignInContext = {}) {
      const { user } = await magicLinks.consume(secret);
      await requireSecondStep(user.id);
      return { ...(await sessions.start(user.id, context)), user };
    },

    /**
     * The second step a page shows after a right first factor, or null when two-step sign-in is
     * off (the page signs the browser in at once). `returnTo` is where the page continues;
     * `browser` (SHA-256 of its pre-session cookie) the only browser that may complete it;
     * `idpId` the identity provider the first factor came from, so the session it opens is
     * recorded as that IdP's (docs/identity-providers.md, Removal).
     */
    async pageSecondStep(userId: string, returnTo: string, browser: string, idpId: string | null = null) {
      if (!(await factors.state(userId)).twoStep) return null;
      return factors.beginSecondStep(userId, { returnTo, browser, ...(idpId ? { idpId } : {}) });
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
