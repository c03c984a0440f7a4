import type { Clock } from '../lib/clock.js';
import { NO_TRACING, type Tracing } from '../lib/tracing.js';
import { CircuitBreaker, type BreakerSettings, type CircuitState } from './breaker.js';
import { callStream, ProviderStream } from './providers/event-stream.js';
import { ADAPTERS } from './providers/index.js';
import { providerSpans, type ProviderSpans } from './provider-spans.js';
import {
  ProviderError,
  type ChatMessage,
  type ChatResult,
  type FailureKind,
  type OutboundOptions,
  type ProviderAdapter,
  type ProviderConfig,
  type ProviderName,
} from './providers/types.js';

/** A provider and the model to ask it for, in the order they are tried. */
export interface Candidate {
  config: ProviderConfig;
  model: string;
}

export interface Attempt {
  provider: ProviderName;
  model: string;
  /** succeeded, skipped (circuit open or probe in flight), cancelled (the client left), or the failure kind. */
  outcome: 'succeeded' | 'skipped' | 'cancelled' | FailureKind;
  httpStatus: number | null;
  latencyMs: number | null;
}

type Failed = { ok: false; attempts: Attempt[]; refusal: ProviderError | null; retryAt: Date | null };

export type RouteOutcome =
  | { ok: true; provider: ProviderName; result: ChatResult; attempts: Attempt[]; latencyMs: number }
  | Failed;

/** A provider's stream that has produced its first text (or finished without any). */
export interface OpenedStream {
  ok: true;
  provider: ProviderName;
  stream: ProviderStream;
  /** The first piece of text; null when the answer finished empty. */
  first: string | null;
  attempts: Attempt[];
  /** Reports how the stream ended, to the provider's circuit, its attempt and the call counter. */
  end(how: 'succeeded' | 'cancelled' | ProviderError): void;
}

/**
 * A provider that accepted a streamed request (answered 2xx with an event stream) and had
 * produced no text when the client left: it was sent the prompt, and bills its input.
 */
interface AcceptedBeforeText {
  provider: ProviderName;
  model: string;
  /** The input tokens the provider reported before any text (Anthropic, Gemini), else null. */
  inputTokens: number | null;
}

export type StreamOutcome =
  | OpenedStream
  | (Failed & { cancelled: false })
  | (Failed & { cancelled: true; accepted: AcceptedBeforeText | null });

/** Which call a provider call was, for the call counter (docs/operations.md, Metrics). */
type CallKind = 'chat' | 'stream' | 'probe';
export type CallObserver = (provider: ProviderName, call: CallKind, outcome: Attempt['outcome']) => void;

export const asProviderError = (provider: ProviderName, err: unknown) =>
  err instanceof ProviderError ? err : new ProviderError(provider, 'malformed', (err as Error).message);

/**
 * Sends a chat to the first candidate whose circuit lets it through, failing over down the
 * list when a provider is unwell. A refused request (a 4xx other than auth) stops the walk:
 * another provider would refuse it too, and the provider itself is fine.
 */
export class Router {
  private readonly breakers = new Map<ProviderName, CircuitBreaker>();
  private readonly spans: ProviderSpans;

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
    private readonly outbound: OutboundOptions,
    private readonly adapters: Readonly<Record<ProviderName, ProviderAdapter>> = ADAPTERS,
    private readonly observe: CallObserver = () => undefined,
    tracing: Tracing = NO_TRACING,
  ) {
    this.spans = providerSpans(tracing);
  }

  /** Every circuit this router holds and its state now (the breaker gauge). */
  circuits(): Array<[ProviderName, CircuitState]> {
    return [...this.breakers].map(([name, breaker]) => [name, breaker.state()]);
  }

  breaker(name: ProviderName): CircuitBreaker {
    let breaker = this.breakers.get(name);
    if (!breaker) {
      breaker = new CircuitBreaker(this.settings, this.clock);
      this.breakers.set(name, breaker);
    }
    return breaker;
  }

  /** Forgets a provider's circuit (its configuration changed or it was removed). */
  reset(name: ProviderName): void {
    this.breakers.delete(name);
  }

  async route(
    candidates: readonly Candidate[],
    messages: ChatMessage[],
    maxOutputTokens: number,
    signal: AbortSignal = new AbortController().signal,
  ): Promise<RouteOutcome> {
    const attempts: Attempt[] = [];
    let retryAt: Date | null = null;
    let movedFrom: ProviderError | null = null;
    for (const { config, model } of candidates) {
      if (movedFrom) this.spans.fallback(movedFrom, config.name);
      movedFrom = null;
      const breaker = this.breaker(config.name);
      if (!breaker.tryAcquire()) {
        this.spans.skipped(config.name, model, breaker.state());
        retryAt = skipped(config.name, model, breaker, attempts, retryAt);
        continue;
      }
      const span = this.spans.attempt(config, model, maxOutputTokens);
      const started = performance.now();
      try {
        const result = await this.adapters[config.name].chat(
          config,
          { model, messages, maxOutputTokens },
          this.outbound,
          signal,
        );
        const latencyMs = Math.round(performance.now() - started);
        breaker.success();
        this.observe(config.name, 'chat', 'succeeded');
        this.spans.end(span, 'succeeded', result);
        attempts.push({ provider: config.name, model, outcome: 'succeeded', httpStatus: 200, latencyMs });
        return { ok: true, provider: config.name, result, attempts, latencyMs };
      } catch (err) {
        const failure = asProviderError(config.name, err);
        const latencyMs = Math.round(performance.now() - started);
        this.spans.end(span, failure);
        if (this.failed(breaker, 'chat', failure, attempts, model, latencyMs))
          return { ok: false, attempts, refusal: failure, retryAt: null };
        movedFrom = failure;
      }
    }
    return { ok: false, attempts, refusal: null, retryAt };
  }

  /**
   * The streamed route (docs/ai.md, Streamed runs): the same walk, where a provider has answered
   * once its first text arrives. Until then a failure fails over like a chat call; after it,
   * nothing can be taken back from the client, so the caller ends the stream and reports it.
   */
  async openStream(
    candidates: readonly Candidate[],
    messages: ChatMessage[],
    maxOutputTokens: number,
    signal: AbortSignal,
  ): Promise<StreamOutcome> {
    const attempts: Attempt[] = [];
    let retryAt: Date | null = null;
    let movedFrom: ProviderError | null = null;
    for (const { config, model } of candidates) {
      if (movedFrom) this.spans.fallback(movedFrom, config.name);
      movedFrom = null;
      const breaker = this.breaker(config.name);
      if (!breaker.tryAcquire()) {
        this.spans.skipped(config.name, model, breaker.state());
        retryAt = skipped(config.name, model, breaker, attempts, retryAt);
        continue;
      }
      // Open until the stream settles (end() below): a streamed answer's span covers all of it.
      const span = this.spans.attempt(config, model, maxOutputTokens);
      const started = performance.now();
      let stream: ProviderStream | null = null;
      try {
        const call = this.adapters[config.name].stream(config, { model, messages, maxOutputTokens });
        const events = await callStream(config.name, call.url, call, this.outbound, signal);
        stream = new ProviderStream(config.name, model, events, call.piece);
        const first = await stream.next();
        const attempt: Attempt = {
          provider: config.name,
          model,
          outcome: 'succeeded',
          httpStatus: 200,
          latencyMs: null,
        };
        attempts.push(attempt);
        return {
          ok: true,
          provider: config.name,
          stream,
          first,
          attempts,
          end: (how) => {
            this.spans.end(span, how, stream);
            attempt.latencyMs = Math.round(performance.now() - started);
            if (how === 'cancelled') {
              breaker.release();
              attempt.outcome = 'cancelled';
              this.observe(config.name, 'stream', 'cancelled');
            } else if (how === 'succeeded') {
              breaker.success();
              this.observe(config.name, 'stream', 'succeeded');
            } else {
              attempt.outcome = how.kind;
              attempt.httpStatus = how.status;
              if (how.countsAsFailure) breaker.failure();
              else breaker.success();
              this.observe(config.name, 'stream', how.kind);
            }
          },
        };
      } catch (err) {
        await stream?.close();
        const latencyMs = Math.round(performance.now() - started);
        if (signal.aborted) {
          // The client left: nothing is known about the provider's health. Whether it had
          // accepted the request (its stream open) decides whether the prompt is charged.
          breaker.release();
          this.observe(config.name, 'stream', 'cancelled');
          this.spans.end(span, 'cancelled', stream);
          const httpStatus = stream ? 200 : null;
          attempts.push({ provider: config.name, model, outcome: 'cancelled', httpStatus, latencyMs });
          const accepted = stream && { provider: config.name, model, inputTokens: stream.inputTokens };
          return { ok: false, attempts, refusal: null, retryAt: null, cancelled: true, accepted };
        }
        const failure = asProviderError(config.name, err);
        this.spans.end(span, failure, stream);
        if (this.failed(breaker, 'stream', failure, attempts, model, latencyMs))
          return { ok: false, attempts, refusal: failure, retryAt: null, cancelled: false };
        movedFrom = failure;
      }
    }
    return { ok: false, attempts, refusal: null, retryAt, cancelled: false };
  }

  /** Records a failed call; true when it was a refusal, which stops the walk. */
  private failed(
    breaker: CircuitBreaker,
    call: CallKind,
    failure: ProviderError,
    attempts: Attempt[],
    model: string,
    latencyMs: number,
  ): boolean {
    attempts.push({ provider: failure.provider, model, outcome: failure.kind, httpStatus: failure.status, latencyMs });
    this.observe(failure.provider, call, failure.kind);
    if (!failure.countsAsFailure) {
      breaker.success();
      return true;
    }
    breaker.failure();
    return false;
  }

  /**
   * The health probe: a free model-list call to a provider whose circuit lets one through
   * (closed, or half-open with no probe in flight). Returns false when it was not probed.
   */
  async probe(config: ProviderConfig): Promise<boolean> {
    const breaker = this.breaker(config.name);
    if (!breaker.tryAcquire()) return false;
    try {
      await this.adapters[config.name].ping(config, this.outbound, new AbortController().signal);
      breaker.success();
      this.observe(config.name, 'probe', 'succeeded');
    } catch (err) {
      const failure = asProviderError(config.name, err);
      this.observe(config.name, 'probe', failure.kind);
      if (!failure.countsAsFailure) breaker.success();
      else breaker.failure();
    }
    return true;
  }
}

/** A provider whose breaker is open is passed over: recorded as skipped; the earliest retry time is kept. */
function skipped(
  provider: ProviderName,
  model: string,
  breaker: CircuitBreaker,
  attempts: Attempt[],
  retryAt: Date | null,
): Date | null {
  attempts.push({ provider, model, outcome: 'skipped', httpStatus: null, latencyMs: null });
  const at = breaker.snapshot().retryAt;
  return at && (!retryAt || at < retryAt) ? at : retryAt;
}
