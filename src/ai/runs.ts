import type { Principal } from '../http/auth.js';
import { DomainError, badRequest, notFound } from '../http/errors.js';
import { rateLimitHeaders } from '../http/rate-limit.js';
import type { RateLimitRule } from '../http/route-config.js';
import { inTransaction } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import { toMicros } from '../wallet/service.js';
import { costMicros, inputTokenBound } from './pricing.js';
import { presentRun } from './presenters.js';
import type { ProviderConfig } from './providers/types.js';
import type { Candidate } from './router.js';
import { createSettlement } from './run-settlement.js';
import { createStreamRuns } from './stream-runs.js';
import type { Admitted, Held, RunDeps, RunInput } from './run-types.js';
import { type RunRow, finishRun, getSession, insertRun, reservedMicros, touchSession } from './store.js';

/** The account's AI rate limit: chat runs per account per minute (times GANTRY_RATE_LIMIT_MULTIPLIER). */
export const AI_RUN_RATE_LIMIT: RateLimitRule = { limit: 60, windowSec: 60, acrossNodes: true };
export const aiRunBucket = (accountId: string) => `ai.runs|account:${accountId}`;

/** Total characters of a run's messages (each message is capped by the route's schema). */
const MAX_TOTAL_CHARS = 200_000;

/**
 * POST /features/chat/runs in four steps, in the order docs/ai.md gives: admit (entitlement,
 * input, providers, session, rate limit), hold (prompt and worst-case cost, recorded with the
 * run in one transaction), route (the providers, outside any transaction), settle (charge the
 * actual cost and finish the run, or record the failure).
 */
export function createRuns(deps: RunDeps) {
  const { db, clock, config, limiter } = deps.kernel;
  const { access } = deps.accounts;
  const { router, context } = deps;
  const { settle, settleFailure } = createSettlement(deps);

  function candidatesFor(list: ProviderConfig[], model: string | undefined): Candidate[] {
    if (!model) return list.map((config) => ({ config, model: config.models[0] }));
    const offering = list.filter((c) => c.models.includes(model)).map((config) => ({ config, model }));
    if (offering.length === 0)
      throw badRequest(`No configured provider offers the model "${model}"`, [
        { field: 'model', message: 'not offered by any configured provider', type: 'any.invalid' },
      ]);
    return offering;
  }

  async function admit(principal: Principal, headerAccountId: string | null, input: RunInput): Promise<Admitted> {
    const ctx = await deps.entitled(principal, headerAccountId);
    access.assertWritable(ctx);
    const caller = { accountId: ctx.accountId, userId: principal.userId };
    const total = input.messages.reduce((n, m) => n + m.content.length, 0);
    if (total > MAX_TOTAL_CHARS)
      throw badRequest(`The messages hold ${total} characters; the limit is ${MAX_TOTAL_CHARS}`, [
        { field: 'messages', message: 'too long in total', type: 'array.max' },
      ]);
    if (!input.messages.some((m) => m.role === 'user'))
      throw badRequest('At least one message must have the role user', [
        { field: 'messages', message: 'no user message', type: 'array.includes' },
      ]);
    const list = await deps.providers();
    if (list.length === 0)
      throw new DomainError(
        'NO_PROVIDER_CONFIGURED',
        'No AI provider is configured; an operator runs `gantry provider set`',
      );
    const candidates = candidatesFor(list, input.model);

    // A session id Gantry generates is new by construction: no lookups for it.
    const fresh = input.sessionId === undefined;
    const sessionId = input.sessionId ?? newId();
    const session = fresh ? undefined : await getSession(db, ctx.accountId, sessionId);
    if (session && session.user_id !== principal.userId) throw notFound('Session');

    const decision = await limiter.charge(aiRunBucket(ctx.accountId), AI_RUN_RATE_LIMIT);
    if (!decision.allowed) {
      throw new DomainError(
        'RATE_LIMIT_EXCEEDED',
        "The account's AI rate limit is exhausted; retry after the time in Retry-After",
        undefined,
        rateLimitHeaders(decision, clock.now().getTime()),
      );
    }
    return { principal, input, ctx, caller, candidates, fresh, sessionId, session };
  }

  async function hold(run: Admitted): Promise<Held> {
    const { principal, input, ctx, sessionId, session, fresh } = run;
    const prompt = [...(await context.assemble(run.caller, sessionId, input.messages, fresh)), ...input.messages];
    const priceTable = await deps.prices();
    const bound = inputTokenBound(prompt.map((m) => m.content));
    // The hold covers the dearest candidate at the largest possible prompt and answer; at
    // least one micro-dollar, so an empty wallet never reaches a provider.
    const held = Math.max(
      1,
      ...run.candidates.map((c) => {
        const price = priceTable.get(`${c.config.name}|${c.model}`);
        return price ? costMicros(price, bound, config.ai.maxOutputTokens) : 0;
      }),
    );

    const startedAt = clock.now().toISOString();
    const staleBefore = new Date(clock.now().getTime() - deps.staleMs).toISOString();
    const row: RunRow = {
      id: newId(),
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
      reserved_micros: held,
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
      const reserved = await reservedMicros(trx, principal.userId, staleBefore);
      if (balance - reserved < held)
        throw new DomainError('INSUFFICIENT_FUNDS', 'The wallet balance is too low for this run');
      // Checked again here: two members may have started the same new session id at once.
      const owner = session ?? (fresh ? undefined : await getSession(trx, ctx.accountId, sessionId));
      if (owner && owner.user_id !== principal.userId) throw notFound('Session');
      if (!owner) await touchSession(trx, ctx.accountId, sessionId, principal.userId, startedAt);
      await insertRun(trx, row);
    });
    return { prompt, priceTable, row };
  }

  /** Asks the providers; an unexpected throw marks the run failed and releases its hold. */
  async function route(run: Admitted, held: Held) {
    const t0 = performance.now();
    const outcome = await router
      .route(run.candidates, held.prompt, config.ai.maxOutputTokens)
      .catch(async (err: unknown) => {
        await finishRun(db, held.row.id, {
          status: 'failed',
          error_code: 'INTERNAL',
          reserved_micros: 0,
          completed_at: clock.now().toISOString(),
        });
        throw err;
      });
    return { outcome, durationMs: Math.round(performance.now() - t0), completedAt: clock.now().toISOString() };
  }

  return {
    /** POST /features/chat/runs: see docs/ai.md for the order of the checks. */
    async startRun(principal: Principal, headerAccountId: string | null, input: RunInput) {
      const run = await admit(principal, headerAccountId, input);
      const held = await hold(run);
      const { outcome, durationMs, completedAt } = await route(run, held);
      if (!outcome.ok) return settleFailure(run, held.row.id, outcome, durationMs, completedAt);
      return presentRun(await settle(run, held, outcome, durationMs, completedAt));
    },
    startStream: createStreamRuns(deps, { admit, hold }),
  };
}
