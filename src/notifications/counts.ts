import { LRUCache } from 'lru-cache';
import type { Clock } from '../lib/clock.js';
import type { Counted } from './store.js';

/** Longest a count is trusted without a change event (a safety net, not the freshness rule). */
const MAX_AGE_MS = 60_000;

interface UserCounts {
  /** Bumped by every change of the user's notifications; a count computed under an older
   * generation is never stored, so a write racing a read cannot leave a stale number behind. */
  generation: number;
  values: Map<string, { count: number; validUntilMs: number }>;
}

/**
 * Counts are a scan of the user's index range (100k notifications: milliseconds), and clients
 * poll them. So they are cached per user until the next change of that user's notifications
 * (NOTIFICATIONS_TOPIC, from this process at once and from others through the change feed)
 * or until the soonest expiry among the rows counted, whichever comes first: an expired
 * notification leaves the count at the moment it expires, as it leaves the list.
 */
export class NotificationCounts {
  private readonly users = new LRUCache<string, UserCounts>({ max: 5_000, ttl: MAX_AGE_MS });

  constructor(private readonly clock: Clock) {}

  invalidate(userId: string | null): void {
    if (userId === null) {
      for (const entry of this.users.values()) this.bump(entry);
      return;
    }
    const entry = this.users.get(userId);
    if (entry) this.bump(entry);
  }

  private bump(entry: UserCounts): void {
    entry.generation++;
    entry.values.clear();
  }

  /** The cached count when there is a valid one: no promise on the hot path (a polled count). */
  peek(userId: string, key: string): number | undefined {
    const hit = this.users.get(userId)?.values.get(key);
    return hit && hit.validUntilMs > this.clock.now().getTime() ? hit.count : undefined;
  }

  async get(userId: string, key: string, compute: () => Promise<Counted>): Promise<number> {
    let entry = this.users.get(userId);
    if (!entry) {
      entry = { generation: 0, values: new Map() };
      this.users.set(userId, entry);
    }
    const nowMs = this.clock.now().getTime();
    const hit = entry.values.get(key);
    if (hit && hit.validUntilMs > nowMs) return hit.count;
    const generation = entry.generation;
    const counted = await compute();
    if (entry.generation === generation) {
      const expiryMs = counted.nextExpiry ? new Date(counted.nextExpiry).getTime() : Infinity;
      entry.values.set(key, { count: counted.count, validUntilMs: Math.min(nowMs + MAX_AGE_MS, expiryMs) });
    }
    return counted.count;
  }
}
