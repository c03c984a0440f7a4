import type { Clock } from '../lib/clock.js';
import { CircuitBreaker, type BreakerSettings } from './breaker.js';
import { ADAPTERS } from './providers/index.js';
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
  /** succeeded, skipped (circuit open or probe in flight), or the failure kind. */
  outcome: 'succeeded' | 'skipped' | FailureKind;
  httpStatus: number | null;
  latencyMs: number | null;
}

export type RouteOutcome =
  | { ok: true; provider: ProviderName; result: ChatResult; attempts: Attempt[]; latencyMs: number }
  | { ok: false; attempts: Attempt[]; refusal: ProviderError | null; retryAt: Date | null };

/**
 * Sends a chat to the first candidate whose circuit lets it through, failing over down the
 * list when a provider is unwell. A refused request (a 4xx other than auth) stops the walk:
 * another provider would refuse it too, and the provider itself is fine.
 */
export class Router {
  private readonly breakers = new Map<ProviderName, CircuitBreaker>();

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
    private readonly outbound: OutboundOptions,
    private readonly adapters: Readonly<Record<ProviderName, ProviderAdapter>> = ADAPTERS,
  ) {}

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
    for (const { config, model } of candidates) {
      const breaker = this.breaker(config.name);
      if (!breaker.tryAcquire()) {
        attempts.push({ provider: config.name, model, outcome: 'skipped', httpStatus: null, latencyMs: null });
        const at = breaker.snapshot().retryAt;
        if (at && (!retryAt || at < retryAt)) retryAt = at;
        continue;
      }
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
        attempts.push({ provider: config.name, model, outcome: 'succeeded', httpStatus: 200, latencyMs });
        return { ok: true, provider: config.name, result, attempts, latencyMs };
      } catch (err) {
        const latencyMs = Math.round(performance.now() - started);
        const failure =
          err instanceof ProviderError ? err : new ProviderError(config.name, 'malformed', (err as Error).message);
        attempts.push({ provider: config.name, model, outcome: failure.kind, httpStatus: failure.status, latencyMs });
        if (!failure.countsAsFailure) {
          breaker.success();
          return { ok: false, attempts, refusal: failure, retryAt: null };
        }
        breaker.failure();
      }
    }
    return { ok: false, attempts, refusal: null, retryAt };
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
    } catch (err) {
      if (err instanceof ProviderError && !err.countsAsFailure) breaker.success();
      else breaker.failure();
    }
    return true;
  }
}
