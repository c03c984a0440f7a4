import { LRUCache } from 'lru-cache';
import type { Kernel } from '../kernel.js';
import type { SealedValues } from '../lib/sealed-rotation.js';
import type { Principal } from '../http/auth.js';
import { DomainError, notFound } from '../http/errors.js';
import type { AccountsService } from '../accounts/service.js';
import { ENTITLEMENT_TOPIC } from '../accounts/service.js';
import type { AccountContext } from '../accounts/access.js';
import type { WalletService } from '../wallet/service.js';
import type { IdentityService } from '../identity/service.js';
import { STATUS_OF, type CircuitState } from './breaker.js';
import { ADAPTERS } from './providers/index.js';
import { PromptContext } from './context.js';
import { AI_PROVIDERS_TOPIC, createProviderAdmin, isProviderName } from './admin.js';
import type { ModelPrice } from './pricing.js';
import { presentRun } from './presenters.js';
import { PROVIDER_NAMES, type ProviderConfig } from './providers/types.js';
import { Router } from './router.js';
import { AI_RUN_RATE_LIMIT, aiRunBucket, createRuns } from './runs.js';
import { abandonStaleRuns, getRun, getSession, listPrices, sessionUsage } from './store.js';

export type { RunInput } from './run-types.js';

/** gantry_ai_breaker_state values (docs/operations.md, Metrics). */
const CIRCUIT_GAUGE: Readonly<Record<CircuitState, number>> = { closed: 0, 'half-open': 1, open: 2 };

/** AI runs and AI operations: routing, circuits, prompt context, prices and the wallet. */
export function createAiService(
  kernel: Kernel,
  deps: { accounts: AccountsService; identity: IdentityService; wallet: WalletService },
) {
  const { db, clock, config, limiter, changes } = kernel;
  const { access } = deps.accounts;
  const admin = createProviderAdmin(kernel);
  const calls = kernel.metrics.counter(
    'gantry_ai_provider_calls_total',
    'AI provider calls, by provider, call (chat, stream, probe) and outcome',
    ['provider', 'call', 'outcome'],
  );
  const router = new Router(
    { threshold: config.ai.breakerThreshold, cooldownMs: config.ai.breakerCooldownMs },
    clock,
    { allowPrivateNetworks: config.allowPrivateNetworks, timeoutMs: config.ai.timeoutMs },
    ADAPTERS,
    (provider, call, outcome) => calls.inc({ provider, call, outcome }),
    kernel.tracing,
  );
  // Read at scrape time; the lazy open -> half-open step happens on that read too.
  kernel.metrics.gauge(
    'gantry_ai_breaker_state',
    'AI provider circuit state: 0 closed, 1 half-open, 2 open',
    ['provider'],
    function () {
      this.reset();
      for (const [provider, state] of router.circuits()) this.set({ provider }, CIRCUIT_GAUGE[state]);
    },
  );
  const context = new PromptContext(db, {
    account: (accountId) => deps.accounts.profile(accountId),
    user: (userId) => deps.identity.profile(userId),
  });
  // Opened provider configs and prices, reloaded when the CLI changes them (change feed).
  const configCache = new LRUCache<'providers', ProviderConfig[]>({ max: 1, ttl: 60_000 });
  const priceCache = new LRUCache<'prices', Map<string, ModelPrice>>({ max: 1, ttl: 60_000 });
  /** A run still "running" after this long was left by a crashed process. */
  const staleMs = config.ai.timeoutMs * PROVIDER_NAMES.length + 60_000;

  changes.subscribe(AI_PROVIDERS_TOPIC, (name) => {
    configCache.clear();
    priceCache.clear();
    if (name && isProviderName(name)) router.reset(name);
  });
  // Whether an account holds the AI entitlement; `gantry account entitle` reaches it through the feed.
  const entitlements = new LRUCache<string, boolean>({ max: 2_000, ttl: 60_000 });
  changes.subscribe(ENTITLEMENT_TOPIC, (accountId) => {
    if (!accountId) return entitlements.clear();
    entitlements.delete(accountId);
    context.forgetAccount(accountId);
  });

  async function providers(): Promise<ProviderConfig[]> {
    let list = configCache.get('providers');
    if (!list) {
      list = await admin.configured();
      configCache.set('providers', list);
    }
    return list;
  }

  async function prices(): Promise<Map<string, ModelPrice>> {
    let map = priceCache.get('prices');
    if (!map) {
      map = new Map(
        (await listPrices(db)).map((p) => [
          `${p.provider}|${p.model}`,
          { inputMicrosPerMtok: p.input_micros_per_mtok, outputMicrosPerMtok: p.output_micros_per_mtok },
        ]),
      );
      priceCache.set('prices', map);
    }
    return map;
  }

  /** The current account, if it holds the AI entitlement (docs/interface.md, Authentication 3). */
  async function entitled(principal: Principal, headerAccountId: string | null): Promise<AccountContext> {
    const ctx = await access.current(principal, headerAccountId);
    let granted = entitlements.get(ctx.accountId);
    if (granted === undefined) {
      granted = await access.hasEntitlement(ctx.accountId, 'ai');
      entitlements.set(ctx.accountId, granted);
    }
    if (!granted) throw new DomainError('AI_NOT_ENTITLED', 'This account does not have the AI entitlement');
    return ctx;
  }

  const runs = createRuns({
    kernel,
    accounts: deps.accounts,
    wallet: deps.wallet,
    router,
    context,
    providers,
    prices,
    entitled,
    staleMs,
  });

  return {
    admin,
    /** Provider keys carry their key id in a column of their own: the AI domain re-seals them itself. */
    sealed: {
      reseal: async () => ({ 'ai_providers.api_key_sealed': await admin.resealKeys() }),
    } satisfies SealedValues,
    router,
    context,
    entitled,

    startRun: runs.startRun,
    startStream: runs.startStream,

    /** The caller's own run; anyone else's is unknown. */
    async getRun(userId: string, runId: string) {
      const row = await getRun(db, runId);
      if (!row || row.user_id !== userId) throw notFound('Run');
      return presentRun(row);
    },

    /** The account's AI run bucket, read without counting (the same bucket runs hit). */
    async rateLimit(ctx: AccountContext) {
      const d = await limiter.read(aiRunBucket(ctx.accountId), AI_RUN_RATE_LIMIT);
      return { limit: d.limit, remaining: d.remaining, resetsAt: d.resetAt.toISOString(), scope: 'account' as const };
    },

    /**
     * The three providers with their live circuit. Unconfigured providers cannot serve:
     * unavailable, with no circuit (circuitState null) and never checked.
     */
    async modelsHealth() {
      const configured = new Set((await providers()).map((p) => p.name));
      return PROVIDER_NAMES.map((name) => {
        if (!configured.has(name))
          return { provider: name, status: 'unavailable' as const, circuitState: null, lastCheckedAt: null };
        const snap = router.breaker(name).snapshot();
        return {
          provider: name,
          status: STATUS_OF[snap.state],
          circuitState: snap.state,
          lastCheckedAt: snap.lastCheckedAt?.toISOString() ?? null,
        };
      });
    },

    /**
     * A session's usage, for the user who ran it only: like runs and chats in it, someone else's
     * session (an account owner's or admin's included) answers as if it did not exist.
     */
    async sessionUsage(ctx: AccountContext, userId: string, sessionId: string) {
      const session = await getSession(db, ctx.accountId, sessionId);
      if (!session || session.user_id !== userId) throw notFound('Session');
      const sums = await sessionUsage(db, ctx.accountId, sessionId);
      const input = Number(sums.input);
      const output = Number(sums.output);
      return {
        sessionId,
        totalInputTokens: input,
        totalOutputTokens: output,
        totalTokens: input + output,
        estimatedCostUsd: Number(sums.unpriced ?? 0) > 0 ? null : Number(sums.cost) / 1_000_000,
        runCount: Number(sums.runs),
      };
    },

    async cacheStats(ctx: AccountContext, userId: string) {
      const layers = await context.cachedLayers({ accountId: ctx.accountId, userId });
      return { cachedLayers: layers.length, layers };
    },

    /** The health probe job: one model-list call per provider whose circuit allows it. */
    async probeProviders(now: Date) {
      const list = await providers();
      const probed = await Promise.all(list.map((p) => router.probe(p)));
      const abandoned = await abandonStaleRuns(db, new Date(now.getTime() - staleMs).toISOString(), now.toISOString());
      return { probed: probed.filter(Boolean).length, abandoned };
    },
  };
}

export type AiService = ReturnType<typeof createAiService>;
