import type { Principal } from '../http/auth.js';
import { estimateTokens } from './pricing.js';
import { presentRun } from './presenters.js';
import type { ProviderError } from './providers/types.js';
import { asProviderError, type OpenedStream } from './router.js';
import { createSettlement } from './run-settlement.js';
import type { Admitted, Held, RunDeps, RunInput } from './run-types.js';
import { finishRun } from './store.js';

/** The events of a streamed run (docs/ai.md, Streamed runs). */
export type ChatStreamEvent =
  | { event: 'start'; data: { runId: string; sessionId: string; provider: string; model: string } }
  | { event: 'delta'; data: { text: string } }
  | { event: 'run'; data: ReturnType<typeof presentRun> }
  | { event: 'error'; data: { code: string; message: string; details: unknown } };

/** The prompt's input tokens, estimated, for a provider that never reported them. */
const promptTokens = (held: Held) => estimateTokens(held.prompt.map((m) => m.content).join('\n'));

/** Sends a streamed run's events as they happen; resolves once the run is settled. */
type StreamRelay = (send: (event: ChatStreamEvent) => void) => Promise<void>;

/**
 * A streamed run: admitted and held like any run, then routed until a provider's first text
 * arrives (failures until then fail over and answer like a non-streamed run), then relayed.
 * Its end settles it: succeeded (charged as any run), cancelled (the client left: `signal`
 * aborted) or failed mid-stream (charged for the usage so far; the circuit counts the failure).
 */
export function createStreamRuns(
  deps: RunDeps,
  steps: {
    admit(principal: Principal, headerAccountId: string | null, input: RunInput): Promise<Admitted>;
    hold(run: Admitted): Promise<Held>;
  },
) {
  const { db, clock, config } = deps.kernel;
  const { settle, settleFailure, settlePartial } = createSettlement(deps);
  const now = () => clock.now().toISOString();

  async function relay(run: Admitted, held: Held, opened: OpenedStream, signal: AbortSignal, t0: number) {
    const { stream, provider, attempts } = opened;
    const attempt = attempts[attempts.length - 1];
    return async (send: (event: ChatStreamEvent) => void) => {
      send({ event: 'start', data: { runId: held.row.id, sessionId: run.sessionId, provider, model: attempt.model } });
      let ended: 'succeeded' | 'cancelled' | ProviderError = 'succeeded';
      try {
        for (let text = opened.first; text !== null; text = await stream.next())
          send({ event: 'delta', data: { text } });
      } catch (err) {
        ended = signal.aborted ? 'cancelled' : asProviderError(provider, err);
      } finally {
        await stream.close();
      }
      opened.end(ended);
      const durationMs = Math.round(performance.now() - t0);
      const completedAt = now();
      if (ended === 'succeeded') {
        const result = {
          content: stream.text,
          model: stream.model,
          inputTokens: stream.inputTokens ?? 0,
          outputTokens: stream.outputTokens ?? 0,
        };
        const latencyMs = attempt.latencyMs ?? durationMs;
        const row = await settle(
          run,
          held,
          { ok: true, provider, result, attempts, latencyMs },
          durationMs,
          completedAt,
        );
        send({ event: 'run', data: presentRun(row) });
        return;
      }
      // Usage so far: what the provider reported, else estimated (an answer cut short may have
      // been counted only at its start, so the text received is a floor for the output).
      const row = await settlePartial(run, held, {
        status: ended === 'cancelled' ? 'cancelled' : 'failed',
        errorCode: ended === 'cancelled' ? 'CLIENT_CLOSED' : 'PROVIDER_STREAM_FAILED',
        provider,
        model: attempt.model,
        text: stream.text,
        inputTokens: stream.inputTokens ?? promptTokens(held),
        outputTokens: Math.max(stream.outputTokens ?? 0, estimateTokens(stream.text)),
        attempts,
        completedAt,
        durationMs,
        latencyMs: attempt.latencyMs,
      });
      if (ended !== 'cancelled')
        send({
          event: 'error',
          data: {
            code: 'UPSTREAM_FAILED',
            message: `The provider ${provider} failed during its answer (${ended.message})`,
            details: { runId: row.id, attempts, run: presentRun(row) },
          },
        });
    };
  }

  /** POST /features/chat/runs with stream: true; throws before any event like a non-streamed run. */
  return async function startStream(
    principal: Principal,
    headerAccountId: string | null,
    input: RunInput,
    signal: AbortSignal,
  ): Promise<StreamRelay> {
    const run = await steps.admit(principal, headerAccountId, input);
    const held = await steps.hold(run);
    const t0 = performance.now();
    const outcome = await deps.router
      .openStream(run.candidates, held.prompt, config.ai.maxOutputTokens, signal)
      .catch(async (err: unknown) => {
        await finishRun(db, held.row.id, {
          status: 'failed',
          error_code: 'INTERNAL',
          reserved_micros: 0,
          completed_at: now(),
        });
        throw err;
      });
    if (outcome.ok) return relay(run, held, outcome, signal, t0);
    const durationMs = Math.round(performance.now() - t0);
    if (!outcome.cancelled) return settleFailure(run, held.row.id, outcome, durationMs, now());
    // The client left before any text. A provider that accepted the request was sent the prompt
    // and bills it: the input is charged as for a run left mid-stream. One that refused or never
    // answered costs nothing (docs/ai.md, Streamed runs).
    const { accepted } = outcome;
    await settlePartial(run, held, {
      status: 'cancelled',
      errorCode: 'CLIENT_CLOSED',
      provider: accepted?.provider ?? null,
      model: accepted?.model ?? null,
      text: '',
      inputTokens: accepted ? (accepted.inputTokens ?? promptTokens(held)) : 0,
      outputTokens: 0,
      attempts: outcome.attempts,
      completedAt: now(),
      durationMs,
      latencyMs: null,
    });
    return async () => undefined;
  };
}
