import type { Clock } from '../lib/clock.js';

export type CircuitState = 'closed' | 'open' | 'half-open';
export type HealthStatus = 'healthy' | 'degraded' | 'unavailable';

/** docs/interface.md, States: closed -> healthy, half-open -> degraded, open -> unavailable. */
export const STATUS_OF: Readonly<Record<CircuitState, HealthStatus>> = {
  closed: 'healthy',
  'half-open': 'degraded',
  open: 'unavailable',
};

export interface BreakerSettings {
  /** Consecutive failures that open a closed circuit. */
  threshold: number;
  /** How long an open circuit refuses calls before letting one probe through. */
  cooldownMs: number;
}

export interface BreakerSnapshot {
  state: CircuitState;
  consecutiveFailures: number;
  openedAt: Date | null;
  lastCheckedAt: Date | null;
  /** When an open circuit will let a probe through. */
  retryAt: Date | null;
}

/**
 * One provider's circuit breaker. Kept in memory, per process: a restart starts closed, and a
 * CLI process never calls providers. Time comes from the injected clock.
 *
 *   closed --(threshold consecutive failures)--> open
 *   open --(cool-down elapsed, read lazily)--> half-open
 *   half-open: exactly one call (the probe) is let through at a time
 *   half-open --probe succeeds--> closed;  half-open --probe fails--> open (cool-down restarts)
 */
export class CircuitBreaker {
  private stateValue: CircuitState = 'closed';
  private failures = 0;
  private openedAtMs: number | null = null;
  private probing = false;
  private lastCheckedMs: number | null = null;

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
  ) {}

  /** The state now (an open circuit whose cool-down has passed reads as half-open). */
  state(): CircuitState {
    if (
      this.stateValue === 'open' &&
      this.openedAtMs !== null &&
      this.clock.now().getTime() - this.openedAtMs >= this.settings.cooldownMs
    ) {
      this.stateValue = 'half-open';
      this.probing = false;
    }
    return this.stateValue;
  }

  /**
   * Asks to make a call. Closed: yes. Open: no. Half-open: yes for the first caller (the
   * probe), no for the others until the probe has reported.
   */
  tryAcquire(): boolean {
    const state = this.state();
    if (state === 'closed') return true;
    if (state === 'open' || this.probing) return false;
    this.probing = true;
    return true;
  }

  success(): void {
    this.lastCheckedMs = this.clock.now().getTime();
    this.stateValue = 'closed';
    this.failures = 0;
    this.openedAtMs = null;
    this.probing = false;
  }

  failure(): void {
    const now = this.clock.now().getTime();
    this.lastCheckedMs = now;
    const state = this.state();
    this.failures++;
    if (state === 'half-open' || (state === 'closed' && this.failures >= this.settings.threshold)) {
      this.stateValue = 'open';
      this.openedAtMs = now;
    } else if (state === 'open') {
      // A late report from a call started before the circuit opened: restart the cool-down.
      this.openedAtMs = now;
    }
    this.probing = false;
  }

  /** A call that ended without saying anything about the provider (cancelled): frees the probe slot. */
  release(): void {
    this.probing = false;
  }

  snapshot(): BreakerSnapshot {
    const state = this.state();
    return {
      state,
      consecutiveFailures: this.failures,
      openedAt: this.openedAtMs === null ? null : new Date(this.openedAtMs),
      lastCheckedAt: this.lastCheckedMs === null ? null : new Date(this.lastCheckedMs),
      retryAt:
        state === 'open' && this.openedAtMs !== null ? new Date(this.openedAtMs + this.settings.cooldownMs) : null,
    };
  }
}
