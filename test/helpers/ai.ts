import type { AppContext } from '../../src/app.js';
import { makeAccount, signedInUser } from './factories.js';
import { startFakeProvider, type FakeProvider } from './fake-ai.js';

/** Environment for AI tests: loopback providers allowed, short timeout, small breaker. */
export const AI_ENV: NodeJS.ProcessEnv = {
  GANTRY_ALLOW_PRIVATE_NETWORKS: 'true',
  GANTRY_AI_TIMEOUT_MS: '1000',
  GANTRY_AI_BREAKER_THRESHOLD: '2',
  GANTRY_AI_BREAKER_COOLDOWN_MS: '10000',
  GANTRY_AI_MAX_OUTPUT_TOKENS: '100',
};

export async function startFakes(): Promise<Record<'openai' | 'anthropic' | 'google', FakeProvider>> {
  return {
    openai: await startFakeProvider('openai'),
    anthropic: await startFakeProvider('anthropic'),
    google: await startFakeProvider('google'),
  };
}

/** Configures a fake as a provider, priced at $1 in / $2 out per 1M tokens unless told. */
export async function configure(
  app: AppContext,
  fake: FakeProvider,
  options: { priority?: number; models?: string[]; priced?: boolean } = {},
) {
  return app.services.ai.admin.set({
    name: fake.kind,
    baseUrl: fake.url,
    apiKey: fake.apiKey,
    models: options.models ?? [`${fake.kind}-test-model`],
    priority: options.priority ?? 1,
    ...(options.priced === false ? {} : { priceIn: 1, priceOut: 2 }),
  });
}

/** A signed-in owner of an AI-entitled account with a funded wallet. */
export async function aiMember(app: AppContext, options: { entitled?: boolean; funds?: number } = {}) {
  const member = await signedInUser(app);
  const account = await makeAccount(app, member.user.id, { displayName: 'Acme Research', industry: 'biotech' });
  if (options.entitled !== false) await app.services.accounts.setEntitlement(account.id, 'ai', true);
  if ((options.funds ?? 10) > 0) await app.services.wallet.credit(member.user.id, options.funds ?? 10);
  return { ...member, account };
}

export const userSays = (content: string) => ({ messages: [{ role: 'user', content }] });
