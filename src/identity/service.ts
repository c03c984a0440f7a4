import { conflict, DomainError, notFound } from '../http/errors.js';
import { hashPassword, verifyPassword } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { Executor } from '../db/tx.js';
import { presentUser } from './presenters.js';
import { createSessions } from './sessions.js';
import { createOneTimeTokens } from './one-time-tokens.js';
import { createMagicLinks } from './magic-links.js';
import * as store from './store.js';

export interface NewUser {
  email: string;
  password?: string | null;
  fullName?: string | null;
  username?: string | null;
  verified?: boolean;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Users and their sign-in sessions: the identity every other domain refers to by user id. */
export function createIdentityService(kernel: Kernel) {
  const { db, clock, config } = kernel;
  const sessions = createSessions(kernel);
  const oneTimeTokens = createOneTimeTokens(clock);
  const magicLinks = createMagicLinks(kernel, oneTimeTokens);
  // Verifying against this when the email is unknown keeps both answers equally slow.
  let decoyHash: Promise<string> | null = null;
  const decoy = () => (decoyHash ??= hashPassword('decoy-password-for-timing', config.scryptCost));

  async function createUser(input: NewUser, executor: Executor = db) {
    const email = normalizeEmail(input.email);
    if (await store.findUserByEmail(executor, email)) throw conflict('A user with this email already exists');
    if (input.username && (await store.findUserByUsername(executor, input.username))) throw conflict('This username is taken');
    const now = clock.now().toISOString();
    const row = {
      id: newId(),
      email,
      email_verified_at: input.verified ? now : null,
      password_hash: input.password ? await hashPassword(input.password, config.scryptCost) : null,
      full_name: input.fullName ?? null,
      username: input.username ?? null,
      avatar_url: null,
      created_at: now,
      updated_at: now,
    };
    await store.insertUser(executor, row);
    return row;
  }

  return {
    sessions,
    sessionVerifier: sessions.verifier,
    oneTimeTokens,
    magicLinks,
    createUser,
    presentUser,
    hashPassword: (password: string) => hashPassword(password, config.scryptCost),

    async getUser(id: string, executor: Executor = db) {
      const user = await store.findUserById(executor, id);
      if (!user) throw notFound('User');
      return user;
    },

    findUserById: (id: string, executor: Executor = db) => store.findUserById(executor, id),
    findUserByEmail: (email: string, executor: Executor = db) => store.findUserByEmail(executor, email),

    /** Email + password; one answer for a wrong password and an unknown email, in similar time. */
    async authenticate(email: string, password: string) {
      const user = await store.findUserByEmail(db, email);
      const ok = await verifyPassword(password, user?.password_hash ?? (await decoy()));
      if (!user || !user.password_hash || !ok) throw new DomainError(401, 'INVALID_CREDENTIALS', 'Wrong email or password');
      return user;
    },

    /** Signs a user in: a new session with its token pair. */
    async login(email: string, password: string) {
      const user = await this.authenticate(email, password);
      const tokens = await sessions.start(user.id);
      return { ...tokens, user };
    },

    async refresh(refreshToken: string) {
      const tokens = await sessions.refresh(refreshToken);
      const user = await this.getUser(tokens.userId);
      return { ...tokens, user };
    },

    logout: (userId: string, refreshToken: string) => sessions.endByRefreshToken(userId, refreshToken),

    /** Signs in with a magic link (API form): a new session, like login. */
    async loginWithMagicLink(secret: string) {
      const { user } = await magicLinks.consume(secret);
      return { ...(await sessions.start(user.id)), user };
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
