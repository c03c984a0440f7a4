import { LRUCache } from 'lru-cache';
import { sha1Hex } from '../lib/crypto.js';
import type { Kernel } from '../kernel.js';
import { buildModel, loadRows, type StatusModel } from './model.js';

/** One prepared answer: exact bytes, their strong ETag and the time they first appeared. */
export interface Representation {
  bytes: Buffer;
  /** `"<sha1 hex of bytes>"` (a strong entity tag, RFC 9110 8.8.3). */
  etag: string;
  /**
   * When these exact bytes first appeared, in ms. Kept exact (HTTP dates stop at the second)
   * so If-Modified-Since can tell a copy from an earlier second from one of the same second.
   */
  firstSeenMs: number;
  /**
   * Whether other bytes under the same key first appeared earlier within the same second: then
   * a copy dated that second may be one of them, and If-Modified-Since cannot confirm it.
   */
  sharesSecond: boolean;
  /** Last-Modified for a response sent at or after firstSeenMs: that second, as an HTTP-date. */
  lastModified: string;
  contentType: string;
}

export interface BuiltBody {
  body: string;
  contentType: string;
}

/** What a builder answers: the body, or null when the thing does not exist (a 404). */
export type BodyBuilder = (model: StatusModel) => BuiltBody | null | Promise<BuiltBody | null>;

export const STATUS_TOPIC = 'status';

/**
 * The public answers of the status service, computed when status data changes (a change on
 * the `status` topic, from this process or another), when a maintenance window moves, and on
 * the refresh job's tick (rolling uptime windows move without writes). Requests never compute:
 * each answer's bytes and SHA-1 are built once per projection version and then served as is.
 *
 * The time those exact bytes first appeared is kept per key: a rebuild that yields identical
 * bytes keeps the old ETag and time. Last-Modified is that second, never later than the
 * response's Date (RFC 9110 8.8.2.1), so several changes within one second share it; the
 * strict rule in http-cache.ts keeps If-Modified-Since from confirming a stale copy.
 */
export class StatusProjection {
  private generation = 1;
  private builtGeneration = 0;
  private model: StatusModel | null = null;
  /**
   * When the latest model before the current one that handed out bytes was built: a stand-in
   * for a key's forgotten history. A model nobody read (an eager rebuild soon replaced) gave
   * no copy to anyone, so it does not count: how often a process rebuilds must not matter.
   */
  private priorBuildMs: number | null = null;
  /** Whether the current model has handed out bytes. */
  private currentServed = false;
  private building: Promise<void> | null = null;
  private eager = false;
  private readonly bodies = new LRUCache<string, { rep: Representation | null }>({ max: 1_000, ttl: 3_600_000 });
  private readonly previous = new LRUCache<string, { etag: string; firstSeenMs: number; sharesSecond: boolean }>({
    max: 1_000,
    ttl: 7 * 86_400_000,
  });

  constructor(private readonly kernel: Kernel) {
    kernel.changes.subscribe(STATUS_TOPIC, () => this.invalidate());
  }

  /** Servers call this: from then on every change is rebuilt at once, without waiting for a reader. */
  activate(): void {
    this.eager = true;
  }

  /**
   * Servers call this as they stop, before the database closes: no more rebuilds ahead of
   * readers, and the one under way (if any) is waited for, so none runs into a closed pool.
   */
  async deactivate(): Promise<void> {
    this.eager = false;
    while (this.building) await this.building.catch(() => undefined);
  }

  /** Marks the projection stale (the next reader, or the eager rebuild, computes it). */
  invalidate(): void {
    this.generation++;
    if (this.eager) {
      setImmediate(() => {
        if (this.eager)
          this.current().catch((err) => this.kernel.logger.error('status projection rebuild failed', { err }));
      });
    }
  }

  /** The timer's rebuild: rolling windows moved. */
  async refresh(): Promise<StatusModel> {
    this.invalidate();
    return this.current();
  }

  /** The current model, rebuilt first if anything changed since it was built. */
  async current(): Promise<StatusModel> {
    while (this.builtGeneration !== this.generation || this.model === null) {
      if (!this.building) {
        const generation = this.generation;
        this.building = this.rebuild(generation).finally(() => {
          this.building = null;
        });
      }
      await this.building;
    }
    return this.model;
  }

  private async rebuild(generation: number): Promise<void> {
    const now = this.kernel.clock.now();
    const rows = await loadRows(this.kernel.db, now);
    if (this.model && this.currentServed) this.priorBuildMs = this.model.at.getTime();
    this.currentServed = false;
    this.model = buildModel(rows, now);
    this.builtGeneration = generation;
    this.bodies.clear();
  }

  /** The prepared representation under `key` when the projection is current and has it: no await on the hot path. */
  prepared(key: string): Representation | null | undefined {
    if (this.builtGeneration !== this.generation) return undefined;
    return this.bodies.get(key)?.rep;
  }

  /** The representation under `key` for the current version; null when the builder found nothing. */
  async representation(key: string, build: BodyBuilder): Promise<Representation | null> {
    const model = await this.current();
    const cached = this.bodies.get(key);
    if (cached) return cached.rep;
    const built = await build(model);
    const rep = built === null ? null : this.seal(key, built, model);
    // A rebuild may have happened meanwhile: only the version the body was built from keeps it.
    if (this.model === model) this.bodies.set(key, { rep });
    return rep;
  }

  private seal(key: string, built: BuiltBody, model: StatusModel): Representation {
    const atMs = model.at.getTime();
    // Bytes of a model already replaced still reach a client: it counts as one that handed out.
    if (model === this.model) this.currentServed = true;
    else this.priorBuildMs = Math.max(this.priorBuildMs ?? 0, atMs);
    const bytes = Buffer.from(built.body, 'utf8');
    const etag = `"${sha1Hex(bytes)}"`;
    const before = this.previous.get(key);
    // Never earlier than the previous bytes' time, even if the wall clock stepped back: a
    // newer copy must never look older to If-Modified-Since.
    const same = before?.etag === etag;
    const firstSeenMs = same ? before.firstSeenMs : Math.max(atMs, before?.firstSeenMs ?? 0);
    // A key whose history was evicted (callers choose keys such as page numbers) may have had
    // other bytes earlier in this second: assume so when the projection itself was rebuilt then.
    const earlierMs = before ? before.firstSeenMs : this.priorBuildMs;
    const sharesSecond = same
      ? before.sharesSecond
      : earlierMs !== null && wholeSecond(earlierMs) === wholeSecond(firstSeenMs);
    this.previous.set(key, { etag, firstSeenMs, sharesSecond });
    return {
      bytes,
      etag,
      firstSeenMs,
      sharesSecond,
      lastModified: httpDate(firstSeenMs),
      contentType: built.contentType,
    };
  }
}

/** The start of the second that holds `ms`: what an HTTP-date can name. */
export const wholeSecond = (ms: number): number => Math.floor(ms / 1000) * 1000;

/** An IMF-fixdate (RFC 9110 5.6.7): the second that holds `ms`. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
