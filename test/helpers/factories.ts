import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../src/app.js';
import type { NewAccount } from '../../src/accounts/service.js';
import { addMember } from './tenancy.js';

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}${randomUUID().slice(0, 4)}`;

export const TEST_PASSWORD = 'correct horse battery';

/** A user with a known password; unique email (and username when asked). */
export async function makeUser(
  app: AppContext,
  overrides: { email?: string; password?: string; fullName?: string; username?: string; verified?: boolean } = {},
) {
  const password = overrides.password ?? TEST_PASSWORD;
  const user = await app.services.identity.createUser({
    email: overrides.email ?? `user-${unique()}@example.test`,
    password,
    fullName: overrides.fullName ?? 'Test User',
    username: overrides.username ?? null,
    verified: overrides.verified ?? true,
  });
  return { ...user, password };
}

/** A signed-in user: the user plus a session access token (first-party). */
export async function signedInUser(app: AppContext, overrides: Parameters<typeof makeUser>[1] = {}) {
  const user = await makeUser(app, overrides);
  const session = await app.services.identity.sessions.start(user.id);
  return {
    user,
    token: session.accessToken,
    refreshToken: session.refreshToken,
    sessionId: session.sessionId,
    headers: bearer(session.accessToken),
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** An account owned by `ownerId`, with its default workspace. */
export async function makeAccount(app: AppContext, ownerId: string, overrides: Partial<NewAccount> = {}) {
  return app.services.accounts.create(ownerId, {
    slug: overrides.slug ?? `acct-${unique()}`,
    legalName: overrides.legalName ?? 'Test Org Ltd',
    ...overrides,
  });
}

/** An account with an owner and one signed-in member of each given role. */
export async function makeTeam(app: AppContext, roles: string[] = []) {
  const owner = await signedInUser(app);
  const account = await makeAccount(app, owner.user.id);
  const members: Record<string, Awaited<ReturnType<typeof signedInUser>>> = {};
  for (const role of roles) {
    const member = await signedInUser(app);
    await addMember(app, account.id, member.user.id, role);
    members[role] = member;
  }
  return { owner, account, members };
}

/**
 * Runs `seal` with the credential key `keyId` active, as a node that has it; afterwards `app`
 * lacks that key, as a node a rotation did not reach (docs/postgres.md, Secrets).
 */
export async function sealUnderLostKey(app: AppContext, keyId: string, key: Buffer, seal: () => Promise<unknown>) {
  const { secrets } = app.kernel;
  const active = secrets.activeCredentialKeyId;
  secrets.credentialKeys.set(keyId, key);
  secrets.activeCredentialKeyId = keyId;
  try {
    await seal();
  } finally {
    secrets.activeCredentialKeyId = active;
    secrets.credentialKeys.delete(keyId);
  }
}
