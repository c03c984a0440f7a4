import { LRUCache } from 'lru-cache';
import type { Kernel } from '../kernel.js';
import type { Principal } from '../http/auth.js';
import { DomainError, badRequest, notFound } from '../http/errors.js';
import { rateLimitHeaders } from '../http/rate-limit.js';
import type { RateLimitRule } from '../http/route-config.js';
import { inTransaction } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { AccountsService } from '../accounts/service.js';
import { ENTITLEMENT_TOPIC } from '../accounts/service.js';
import type { AccountContext } from '../accounts/access.js';
import { toMicros, type WalletService } from '../wallet/service.js';
import { STATUS_OF } from './breaker.js';
import { PromptContext } from './context.js';
import { AI_PROVIDERS_TOPIC, createProviderAdmin, isProviderName } from './admin.js';
import { costMicros, inputTokenBound, type ModelPrice } from './pricing.js';
import { presentRun } from './presenters.js';
import { PROVIDER_NAMES, type ChatMessage, type ProviderConfig } from './providers/types.js';
import { Router, type Candidate } from './router.js';
import { type RunRow, abandonStaleRuns, finishRun, getRun, getSession, insertRun, listPrices, reservedMicros, sessionUsage, touchSession } from './store.js';

/** The account's AI rate limit: chat runs per account per minute (times GANTRY_RATE_LIMIT_MULTIPLIER). */
export const AI_RUN_RATE_LIMIT: RateLimitRule = { limit: 60, windowSec: 60 };
export const aiRunBucket = (accountId: string) => `ai.runs|account:${accountId}`;

/** Total characters of a run's messages (each message is capped by the route's schema). */
export const MAX_TOTAL_CHARS = 200_000;

export interface RunInput {
  messages: ChatMessage[];
  sessionId?: string;
  model?: string;
}

/** AI runs and AI operations: routing, circuits, prompt context, prices and the wallet. */
export function createAiService(kernel: Kernel, deps: { accounts: AccountsService; wallet: WalletService }) {
  const { db, clock, config, limiter, changes, logger } = kernel;
  const { access } = deps.accounts;
  const admin = createProviderAdmin(kernel);
  const router = new Router({ threshold: config.ai.breakerThreshold, cooldownMs: config.ai.breakerCooldownMs }, clock, {
    allowPrivateNetworks: config.allowPrivateNetworks,
    timeoutMs: config.ai.timeoutMs,
  });
  const context = new PromptContext(db);
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
      map = new Map((await listPrices(db)).map((p) => [`${p.provider}|${p.model}`, { inputMicrosPerMtok: p.input_micros_per_mtok, outputMicrosPerMtok: p.output_micros_per_mtok }]));
      priceCache.set('prices', map);
    }
    return map;
  }

  /** The current account, if it holds the AI entitlement (spec, Authentication 3). */
  async function entitled(principal: Principal, headerAccountId: string | null): Promise<AccountContext> {
    const ctx = await access.current(principal, headerAccountId);
    let granted = entitlements.get(ctx.accountId);
    if (granted === undefined) {
      granted = await access.hasEntitlement(ctx.accountId, 'ai');
      entitlements.set(ctx.accountId, granted);
    }
    if (!granted) throw new DomainError(403, 'AI_NOT_ENTITLED', 'This account does not have the AI entitlement');
    return ctx;
  }

  function candidatesFor(list: ProviderConfig[], model: string | undefined): Candidate[] {
    if (!model) return list.map((config) => ({ config, model: config.models[0] }));
    const offering = list.filter((c) => c.models.includes(model)).map((config) => ({ config, model }));
    if (offering.length === 0) throw badRequest(`No configured provider offers the model "${model}"`, [{ field: 'model', message: 'not offered by any configured provider', type: 'any.invalid' }]);
    return offering;
  }

  return {
    admin,
    router,
    context,
    entitled,

    /** POST /features/chat/runs: see docs/ai.md for the order of the checks. */
    async startRun(principal: Principal, headerAccountId: string | null, input: RunInput) {
      const ctx = await entitled(principal, headerAccountId);
      access.assertWritable(ctx);
      const caller = { accountId: ctx.accountId, userId: principal.userId };
      const total = input.messages.reduce((n, m) => n + m.content.length, 0);
      if (total > MAX_TOTAL_CHARS) throw badRequest(`The messages hold ${total} characters; the limit is ${MAX_TOTAL_CHARS}`, [{ field: 'messages', message: 'too long in total', type: 'array.max' }]);
      if (!input.messages.some((m) => m.role === 'user')) throw badRequest('At least one message must have the role user', [{ field: 'messages', message: 'no user message', type: 'array.includes' }]);
      const list = await providers();
      if (list.length === 0) throw new DomainError(503, 'NO_PROVIDER_CONFIGURED', 'No AI provider is configured; an operator runs `gantry provider set`');
      const candidates = candidatesFor(list, input.model);

      // A session id Gantry generates is new by construction: no lookups for it.
      const fresh = input.sessionId === undefined;
      const sessionId = input.sessionId ?? newId();
      const session = fresh ? undefined : await getSession(db, ctx.accountId, sessionId);
      if (session && session.user_id !== principal.userId) throw notFound('Session');

      const decision = limiter.hit(aiRunBucket(ctx.accountId), AI_RUN_RATE_LIMIT);
      if (!decision.allowed) {
        throw new DomainError(429, 'RATE_LIMIT_EXCEEDED', "The account's AI rate limit is exhausted; retry after the time in Retry-After", undefined, rateLimitHeaders(decision, clock.now().getTime()));
      }

      const prompt = [...(await context.assemble(caller, sessionId, input.messages, fresh)), ...input.messages];
      const priceTable = await prices();
      const maxOut = config.ai.maxOutputTokens;
      const bound = inputTokenBound(prompt.map((m) => m.content));
      // The hold covers the dearest candidate at the largest possible prompt and answer; at
      // least one micro-dollar, so an empty wallet never reaches a provider.
      const hold = Math.max(1, ...candidates.map((c) => {
        const price = priceTable.get(`${c.config.name}|${c.model}`);
        return price ? costMicros(price, bound, maxOut) : 0;
      }));

      const runId = newId();
      const startedAt = clock.now().toISOString();
      const staleBefore = new Date(clock.now().getTime() - staleMs).toISOString();
      const row: RunRow = {
        id: runId,
        account_id: ctx.accountId,
        user_id: principal.userId,
        session_id: sessionId,
        status: 'running',
        requested_model: input.model ?? null,
        provider: null,
        model: null,
        messages: JSON.stringify(input.messages),
        reply: null,
        input_tokens: 0,
        output_tokens: 0,
        cost_micros: null,
        reserved_micros: hold,
        charged_micros: 0,
        attempts: '[]',
        error_code: null,
        started_at: startedAt,
        completed_at: null,
        duration_ms: null,
        provider_latency_ms: null,
      };
      await inTransaction(db, async (trx) => {
        const balance = toMicros((await deps.wallet.get(principal.userId, trx)).balance);
        const held = await reservedMicros(trx, principal.userId, staleBefore);
        if (balance - held < hold) throw new DomainError(402, 'INSUFFICIENT_FUNDS', 'The wallet balance is too low for this run');
        // Checked again here: two members may have started the same new session id at once.
        const owner = session ?? (fresh ? undefined : await getSession(trx, ctx.accountId, sessionId));
        if (owner && owner.user_id !== principal.userId) throw notFound('Session');
        if (!owner) await touchSession(trx, ctx.accountId, sessionId, principal.userId, startedAt);
        await insertRun(trx, row);
      });

      const t0 = performance.now();
      const outcome = await router.route(candidates, prompt, maxOut).catch(async (err: unknown) => {
        await finishRun(db, runId, { status: 'failed', error_code: 'INTERNAL', reserved_micros: 0, completed_at: clock.now().toISOString() });
        throw err;
      });
      const durationMs = Math.round(performance.now() - t0);
      const completedAt = clock.now().toISOString();

      if (!outcome.ok) {
        const allSkipped = outcome.attempts.every((a) => a.outcome === 'skipped');
        const code = outcome.refusal ? 'PROVIDER_REFUSED' : allSkipped ? 'PROVIDERS_UNAVAILABLE' : 'PROVIDERS_FAILED';
        await inTransaction(db, async (trx) => {
          await finishRun(trx, runId, { status: 'failed', error_code: code, attempts: JSON.stringify(outcome.attempts), reserved_micros: 0, cost_micros: 0, completed_at: completedAt, duration_ms: durationMs });
          await touchSession(trx, ctx.accountId, sessionId, principal.userId, completedAt);
        });
        const details = { runId, attempts: outcome.attempts };
        if (outcome.refusal) throw new DomainError(502, 'UPSTREAM_FAILED', `The provider ${outcome.refusal.provider} refused the request (${outcome.refusal.message})`, details);
        if (allSkipped) {
          const wait = outcome.retryAt ? Math.max(1, Math.ceil((outcome.retryAt.getTime() - clock.now().getTime()) / 1000)) : 1;
          throw new DomainError(503, 'UPSTREAM_FAILED', 'Every configured provider is unavailable (circuit open); retry later', details, { 'Retry-After': String(wait) });
        }
        throw new DomainError(502, 'UPSTREAM_FAILED', 'Every configured provider failed to answer', details);
      }

      const { result, provider } = outcome;
      const servedModel = outcome.attempts[outcome.attempts.length - 1].model;
      const price = priceTable.get(`${provider}|${servedModel}`);
      const cost = price ? costMicros(price, result.inputTokens, result.outputTokens) : null;
      await inTransaction(db, async (trx) => {
        let charged = cost ?? 0;
        if (charged > 0) {
          try {
            await deps.wallet.debit(trx, principal.userId, charged, 'ai_run', runId);
          } catch (err) {
            if (!(err instanceof DomainError) || err.status !== 402) throw err;
            // The provider counted more than the hold allowed for and the wallet cannot cover
            // it all: take what is there, never below zero (docs/ai.md).
            charged = Math.min(charged, toMicros((await deps.wallet.get(principal.userId, trx)).balance));
            if (charged > 0) await deps.wallet.debit(trx, principal.userId, charged, 'ai_run', runId);
          }
        }
        Object.assign(row, {
          status: 'succeeded',
          provider,
          model: servedModel,
          reply: result.content,
          input_tokens: result.inputTokens,
          output_tokens: result.outputTokens,
          cost_micros: cost,
          reserved_micros: 0,
          charged_micros: charged,
          attempts: JSON.stringify(outcome.attempts),
          completed_at: completedAt,
          duration_ms: durationMs,
          provider_latency_ms: outcome.latencyMs,
        } satisfies Partial<RunRow>);
        await finishRun(trx, runId, row);
        await touchSession(trx, ctx.accountId, sessionId, principal.userId, completedAt);
      });
      context.runCompleted(caller, sessionId, input.messages.filter((m) => m.role === 'user').at(-1), result.content, session ? null : (input.messages.find((m) => m.role === 'user')?.content ?? null));
      if (outcome.attempts.length > 1) logger.info('ai run failed over', { runId, attempts: outcome.attempts.map((a) => `${a.provider}:${a.outcome}`).join(',') });
      return presentRun(row);
    },

    /** The caller's own run; anyone else's is unknown. */
    async getRun(userId: string, runId: string) {
      const row = await getRun(db, runId);
      if (!row || row.user_id !== userId) throw notFound('Run');
      return presentRun(row);
    },

    /** The account's AI run bucket, read without counting (the same bucket runs hit). */
    rateLimit(ctx: AccountContext) {
      const d = limiter.peek(aiRunBucket(ctx.accountId), AI_RUN_RATE_LIMIT);
      return { limit: d.limit, remaining: d.remaining, resetsAt: d.resetAt.toISOString(), scope: 'account' as const };
    },

    /**
     * The three providers with their live circuit. Unconfigured providers cannot serve:
     * unavailable, with no circuit (circuitState null) and never checked.
     */
    async modelsHealth() {
      const configured = new Set((await providers()).map((p) => p.name));
      return PROVIDER_NAMES.map((name) => {
        if (!configured.has(name)) return { provider: name, status: 'unavailable' as const, circuitState: null, lastCheckedAt: null };
        const snap = router.breaker(name).snapshot();
        return { provider: name, status: STATUS_OF[snap.state], circuitState: snap.state, lastCheckedAt: snap.lastCheckedAt?.toISOString() ?? null };
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
