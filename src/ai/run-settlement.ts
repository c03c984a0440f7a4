import { DomainError } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import { toMicros } from '../wallet/service.js';
import { costMicros } from './pricing.js';
import type { Attempt, RouteOutcome } from './router.js';
import type { ProviderName } from './providers/types.js';
import { type RunRow, finishRun, touchSession } from './store.js';
import type { Admitted, Held, RunDeps } from './run-types.js';

/** How a streamed run ended short of its answer, with the usage counted for it. */
export interface PartialEnd {
  status: 'cancelled' | 'failed';
  errorCode: string;
  provider: ProviderName | null;
  model: string | null;
  text: string;
  inputTokens: number;
  outputTokens: number;
  attempts: Attempt[];
  completedAt: string;
  durationMs: number;
  latencyMs: number | null;
}

/**
 * The last step of a run (docs/ai.md): charge the actual cost and finish the run, or record
 * that no provider answered; either way the hold on the wallet is released.
 */
export function createSettlement(deps: RunDeps) {
  const { db, clock, logger } = deps.kernel;
  const { context } = deps;

  /** Records a run no provider answered, releasing its hold, and throws the answer for it. */
  async function settleFailure(
    run: Admitted,
    runId: string,
    outcome: Extract<RouteOutcome, { ok: false }>,
    durationMs: number,
    completedAt: string,
  ): Promise<never> {
    const allSkipped = outcome.attempts.every((a) => a.outcome === 'skipped');
    const code = outcome.refusal ? 'PROVIDER_REFUSED' : allSkipped ? 'PROVIDERS_UNAVAILABLE' : 'PROVIDERS_FAILED';
    await inTransaction(db, async (trx) => {
      await finishRun(trx, runId, {
        status: 'failed',
        error_code: code,
        attempts: JSON.stringify(outcome.attempts),
        reserved_micros: 0,
        cost_micros: 0,
        completed_at: completedAt,
        duration_ms: durationMs,
      });
      await touchSession(trx, run.ctx.accountId, run.sessionId, run.principal.userId, completedAt);
    });
    const details = { runId, attempts: outcome.attempts };
    if (outcome.refusal)
      throw new DomainError(
        'UPSTREAM_FAILED',
        `The provider ${outcome.refusal.provider} refused the request (${outcome.refusal.message})`,
        details,
      );
    if (allSkipped) {
      const wait = outcome.retryAt
        ? Math.max(1, Math.ceil((outcome.retryAt.getTime() - clock.now().getTime()) / 1000))
        : 1;
      throw DomainError.withStatus(
        503,
        'UPSTREAM_FAILED',
        'Every configured provider is unavailable (circuit open); retry later',
        details,
        { 'Retry-After': String(wait) },
      );
    }
    throw new DomainError('UPSTREAM_FAILED', 'Every configured provider failed to answer', details);
  }

  /** Charges the actual cost and finishes the run in one transaction; returns the final row. */
  async function settle(
    run: Admitted,
    held: Held,
    outcome: Extract<RouteOutcome, { ok: true }>,
    durationMs: number,
    completedAt: string,
  ): Promise<RunRow> {
    const { principal, input } = run;
    const { row } = held;
    const { result, provider } = outcome;
    const servedModel = outcome.attempts[outcome.attempts.length - 1].model;
    const price = held.priceTable.get(`${provider}|${servedModel}`);
    const cost = price ? costMicros(price, result.inputTokens, result.outputTokens) : null;
    await inTransaction(db, async (trx) => {
      let charged = cost ?? 0;
      if (charged > 0) {
        try {
          await deps.wallet.debit(trx, principal.userId, charged, 'ai_run', row.id);
        } catch (err) {
          if (!(err instanceof DomainError) || err.status !== 402) throw err;
          // The provider counted more than the hold allowed for and the wallet cannot cover
          // it all: take what is there, never below zero (docs/ai.md).
          charged = Math.min(charged, toMicros((await deps.wallet.get(principal.userId, trx)).balance));
          if (charged > 0) await deps.wallet.debit(trx, principal.userId, charged, 'ai_run', row.id);
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
      await finishRun(trx, row.id, row);
      await touchSession(trx, run.ctx.accountId, run.sessionId, principal.userId, completedAt);
    });
    context.runCompleted(
      run.caller,
      run.sessionId,
      input.messages.filter((m) => m.role === 'user').at(-1),
      result.content,
      run.session ? null : (input.messages.find((m) => m.role === 'user')?.content ?? null),
    );
    if (outcome.attempts.length > 1)
      logger.info('ai run failed over', {
        runId: row.id,
        attempts: outcome.attempts.map((a) => `${a.provider}:${a.outcome}`).join(','),
      });
    return row;
  }

  /**
   * Finishes a streamed run that did not complete (the client left, or the provider failed
   * after its first text): charged for the usage so far, never more than its hold nor the
   * balance (docs/ai.md, Streamed runs).
   */
  async function settlePartial(run: Admitted, held: Held, ended: PartialEnd): Promise<RunRow> {
    const { row } = held;
    const price = ended.provider && ended.model ? held.priceTable.get(`${ended.provider}|${ended.model}`) : undefined;
    const cost = price ? costMicros(price, ended.inputTokens, ended.outputTokens) : ended.provider ? null : 0;
    await inTransaction(db, async (trx) => {
      const balance = toMicros((await deps.wallet.get(run.principal.userId, trx)).balance);
      const charged = Math.max(0, Math.min(cost ?? 0, row.reserved_micros, balance));
      if (charged > 0) await deps.wallet.debit(trx, run.principal.userId, charged, 'ai_run', row.id);
      Object.assign(row, {
        status: ended.status,
        error_code: ended.errorCode,
        provider: ended.provider,
        model: ended.model,
        reply: ended.text === '' ? null : ended.text,
        input_tokens: ended.inputTokens,
        output_tokens: ended.outputTokens,
        cost_micros: cost,
        reserved_micros: 0,
        charged_micros: charged,
        attempts: JSON.stringify(ended.attempts),
        completed_at: ended.completedAt,
        duration_ms: ended.durationMs,
        provider_latency_ms: ended.latencyMs,
      } satisfies Partial<RunRow>);
      await finishRun(trx, row.id, row);
      await touchSession(trx, run.ctx.accountId, run.sessionId, run.principal.userId, ended.completedAt);
    });
    return row;
  }

  return { settle, settleFailure, settlePartial };
}
