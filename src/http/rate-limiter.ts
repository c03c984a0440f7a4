import { LRUCache } from 'lru-cache';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Database } from '../db/connection.js';
import {
  deleteEndedWindows,
  hitWindow,
  readWindow,
  readWindows,
  type StoredWindow,
} from '../db/store/rate-limit-windows.js';
import type { RateLimitRule } from './route-config.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the current window ends. */
  resetAt: Date;
}

interface Window {
  count: number;
  resetAtMs: number;
}

/** The counters several nodes share: the database and where its failures are told. */
interface SharedCounters {
  db: Database;
  logger: Logger;
}

/** How often ended windows are swept from the shared table, at most. */
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Fixed-window counters in a bounded LRU: memory stays flat whatever the number of callers
 * (the oldest idle buckets are dropped first, which can only forgive, never over-count).
 * lru-cache preallocates its index for `max` entries: 50k buckets cost about 2.5 MB.
 * Every limit is multiplied by GANTRY_RATE_LIMIT_MULTIPLIER.
 *
 * With `shared` (PostgreSQL), the security rules (`acrossNodes`) count in the database
 * instead, exact across every node; when the database fails, the memory counter answers
 * rather than the request failing (docs/postgres.md, Rate limits).
 */
export class RateLimiter {
  private readonly windows = new LRUCache<string, Window>({ max: 20_000, ttl: 24 * 3_600_000 });
  private lastSweepMs = 0;
  private lastFailureLogMs = 0;

  constructor(
    private readonly multiplier: number,
    private readonly clock: Clock,
    private readonly shared: SharedCounters | null = null,
  ) {}

  /** `counted`: the stored count includes this request (a hit), else it is a read of what was spent. */
  private decision(limit: number, stored: StoredWindow, counted: boolean): RateDecision {
    return {
      allowed: counted ? stored.count <= limit : stored.count < limit,
      limit,
      remaining: Math.max(0, limit - stored.count),
      resetAt: new Date(stored.resetAtMs),
    };
  }

  private failed(err: unknown): void {
    const nowMs = this.clock.now().getTime();
    if (nowMs - this.lastFailureLogMs < 60_000) return;
    this.lastFailureLogMs = nowMs;
    this.shared?.logger.warn('rate limit counters unavailable; counting in this node only', {
      reason: (err as Error).message,
    });
  }

  /** Counts one request: in the shared counters for a rule marked `acrossNodes`, else as `hit`. */
  async charge(bucket: string, rule: RateLimitRule): Promise<RateDecision> {
    if (!this.shared || !rule.acrossNodes) return this.hit(bucket, rule);
    const nowMs = this.clock.now().getTime();
    try {
      const stored = await hitWindow(this.shared.db, bucket, nowMs, rule.windowSec * 1000);
      this.sweepNowAndThen(nowMs);
      return this.decision(this.effectiveLimit(rule), stored, true);
    } catch (err) {
      this.failed(err);
      return this.hit(bucket, rule);
    }
  }

  /** Reads the bucket without counting, where `charge` counts it. */
  async read(bucket: string, rule: RateLimitRule): Promise<RateDecision> {
    if (!this.shared || !rule.acrossNodes) return this.peek(bucket, rule);
    const nowMs = this.clock.now().getTime();
    try {
      return this.unspent(rule, await readWindow(this.shared.db, bucket, nowMs), nowMs);
    } catch (err) {
      this.failed(err);
      return this.peek(bucket, rule);
    }
  }

  /** `read` of several buckets, in one query when they all count in the shared table. */
  async readAll(reads: Array<{ bucket: string; rule: RateLimitRule }>): Promise<RateDecision[]> {
    const shared = this.shared;
    if (!shared || !reads.every(({ rule }) => rule.acrossNodes))
      return Promise.all(reads.map((r) => this.read(r.bucket, r.rule)));
    const nowMs = this.clock.now().getTime();
    try {
      const stored = await readWindows(
        shared.db,
        reads.map(({ bucket }) => bucket),
        nowMs,
      );
      return reads.map(({ bucket, rule }) => this.unspent(rule, stored.get(bucket) ?? null, nowMs));
    } catch (err) {
      this.failed(err);
      return reads.map(({ bucket, rule }) => this.peek(bucket, rule));
    }
  }

  /** The decision on a read (also a domain statement's, `countsShared`): what is left, all of it without a window. */
  unspent(rule: RateLimitRule, stored: StoredWindow | null, nowMs: number): RateDecision {
    const limit = this.effectiveLimit(rule);
    return stored
      ? this.decision(limit, stored, false)
      : { allowed: true, limit, remaining: limit, resetAt: new Date(nowMs + rule.windowSec * 1000) };
  }

  /**
   * Whether this rule counts in the shared table (PostgreSQL, `acrossNodes`): then a statement
   * of a domain store may count a hit together with its own work, and `decide` reads its result.
   */
  countsShared(rule: RateLimitRule): boolean {
    return this.shared !== null && rule.acrossNodes === true;
  }

  /** The decision on a hit a statement of its own counted in the shared table. */
  decide(rule: RateLimitRule, stored: StoredWindow): RateDecision {
    this.sweepNowAndThen(this.clock.now().getTime());
    return this.decision(this.effectiveLimit(rule), stored, true);
  }

  /** Drops the shared table's ended windows, at most every SWEEP_EVERY_MS, in the background. */
  private sweepNowAndThen(nowMs: number): void {
    if (!this.shared || nowMs - this.lastSweepMs <= SWEEP_EVERY_MS) return;
    this.lastSweepMs = nowMs;
    deleteEndedWindows(this.shared.db, nowMs).catch((err) => this.failed(err));
  }

  effectiveLimit(rule: RateLimitRule): number {
    return Math.max(1, Math.floor(rule.limit * this.multiplier));
  }

  private current(bucket: string, rule: RateLimitRule, nowMs: number): Window {
    const existing = this.windows.get(bucket);
    if (existing && existing.resetAtMs > nowMs) return existing;
    const fresh = { count: 0, resetAtMs: nowMs + rule.windowSec * 1000 };
    this.windows.set(bucket, fresh, { ttl: rule.windowSec * 1000 + 1000 });
    return fresh;
  }

  /** Counts one request against the bucket. */
  hit(bucket: string, rule: RateLimitRule): RateDecision {
    const nowMs = this.clock.now().getTime();
    const limit = this.effectiveLimit(rule);
    const window = this.current(bucket, rule, nowMs);
    const allowed = window.count < limit;
    if (allowed) window.count++;
    return { allowed, limit, remaining: Math.max(0, limit - window.count), resetAt: new Date(window.resetAtMs) };
  }

  /** Reads the bucket without counting. */
  peek(bucket: string, rule: RateLimitRule): RateDecision {
    const nowMs = this.clock.now().getTime();
    const limit = this.effectiveLimit(rule);
    const existing = this.windows.get(bucket);
    if (!existing || existing.resetAtMs <= nowMs)
      return { allowed: true, limit, remaining: limit, resetAt: new Date(nowMs + rule.windowSec * 1000) };
    return {
      allowed: existing.count < limit,
      limit,
      remaining: Math.max(0, limit - existing.count),
      resetAt: new Date(existing.resetAtMs),
    };
  }
}
