import { LRUCache } from 'lru-cache';
import { sha1Hex } from '../lib/crypto.js';
import type { Kernel } from '../kernel.js';
import { buildModel, latestChangeMs, loadRows, type StatusModel } from './model.js';

/** One prepared answer: exact bytes, their strong ETag and the instant they are as of. */
export interface Representation {
  bytes: Buffer;
  /** `"<sha1 hex of bytes>"` (a strong entity tag, RFC 9110 8.8.3). */
  etag: string;
  /**
   * The projection's as-of instant in ms (docs/status.md, Projections and caching). Kept exact
   * (HTTP dates stop at the second) so If-Modified-Since can tell whether a date names it.
   */
  asOfMs: number;
  /** Last-Modified: the second that holds asOfMs, as an HTTP-date. */
  lastModified: string;
  contentType: string;
}

interface BuiltBody {
  body: string;
  contentType: string;
}

/** What a builder answers: the body, or null when the thing does not exist (a 404). */
export type BodyBuilder = (model: StatusModel) => BuiltBody | null | Promise<BuiltBody | null>;

export const STATUS_TOPIC = 'status';

/** Rolling uptime windows move by the minute: the granularity of the as-of time. */
const GRANULE_MS = 60_000;

/**
 * The public answers of the status service, computed when status data changes (a change on
 * the `status` topic, from this process or another) and when the minute turns (rolling uptime
 * windows move without writes). Requests never compute: each answer's bytes and SHA-1 are
 * built once per projection version and then served as is.
 *
 * A version is a pure function of the database rows and its as-of time: the start of the
 * current minute or the latest change of the status data, whichever is later. Every node
 * over one database therefore builds the same bytes, ETag and Last-Modified (the as-of time)
 * for the same data, whichever node saw what first (docs/status.md, Projections and caching).
 */
export class StatusProjection {
  private generation = 1;
  private builtGeneration = 0;
  private model: StatusModel | null = null;
  /** The end of the minute the current model was built in: it is stale from then on. */
  private validUntilMs = 0;
  private building: Promise<void> | null = null;
  private eager = false;
  private readonly bodies = new LRUCache<string, { rep: Representation | null }>({ max: 1_000, ttl: 3_600_000 });

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

  /** The timer's rebuild when the minute turns, so that no request waits for it. */
  async refresh(): Promise<StatusModel> {
    return this.current();
  }

  private isCurrent(): boolean {
    return (
      this.model !== null &&
      this.builtGeneration === this.generation &&
      this.kernel.clock.now().getTime() < this.validUntilMs
    );
  }

  /** The current model, rebuilt first if anything changed since it was built or the minute turned. */
  async current(): Promise<StatusModel> {
    while (!this.isCurrent()) {
      if (!this.building) {
        const generation = this.generation;
        this.building = this.rebuild(generation).finally(() => {
          this.building = null;
        });
      }
      await this.building;
    }
    return this.model as StatusModel;
  }

  private async rebuild(generation: number): Promise<void> {
    const nowMs = this.kernel.clock.now().getTime();
    // loadRows reads a day more history than the longest window needs: where within the
    // minute this node loads changes nothing in what the model shows.
    const rows = await loadRows(this.kernel.db, new Date(nowMs));
    const minuteStart = Math.floor(nowMs / GRANULE_MS) * GRANULE_MS;
    // Nothing below reads the clock: the model depends on the rows and this instant only.
    const asOf = Math.max(minuteStart, latestChangeMs(rows));
    this.model = buildModel(rows, new Date(asOf));
    this.validUntilMs = minuteStart + GRANULE_MS;
    this.builtGeneration = generation;
    this.bodies.clear();
  }

  /** The prepared representation under `key` when the projection is current and has it: no await on the hot path. */
  prepared(key: string): Representation | null | undefined {
    if (!this.isCurrent()) return undefined;
    return this.bodies.get(key)?.rep;
  }

  /** The representation under `key` for the current version; null when the builder found nothing. */
  async representation(key: string, build: BodyBuilder): Promise<Representation | null> {
    const model = await this.current();
    const cached = this.bodies.get(key);
    if (cached) return cached.rep;
    const built = await build(model);
    const rep = built === null ? null : seal(built, model);
    // A rebuild may have happened meanwhile: only the version the body was built from keeps it.
    if (this.model === model) this.bodies.set(key, { rep });
    return rep;
  }
}

function seal(built: BuiltBody, model: StatusModel): Representation {
  const bytes = Buffer.from(built.body, 'utf8');
  const asOfMs = model.at.getTime();
  return {
    bytes,
    etag: `"${sha1Hex(bytes)}"`,
    asOfMs,
    lastModified: httpDate(asOfMs),
    contentType: built.contentType,
  };
}

/** An IMF-fixdate (RFC 9110 5.6.7): the second that holds `ms`. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
