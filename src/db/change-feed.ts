import { EventEmitter } from 'node:events';
import type SqliteDatabase from 'better-sqlite3';
import { newId } from '../lib/ids.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Database } from './connection.js';
import { afterCommit, type Executor } from './tx.js';

/** Rows read per query when catching up. */
export const CHANGE_FEED_PAGE = 1_000;

export type ChangeListener = (key: string | null) => void;

/**
 * How a change made by one process reaches the others on the same database within a second
 * (docs/interface.md, Operations: CLI changes are visible to the running server). A writer records
 * (topic, key) in change_feed inside its own transaction and notifies its own listeners once
 * it commits (tx.ts, afterCommit); every other process watches `PRAGMA data_version`, which moves when another
 * connection commits, and replays the rows it has not seen. Listeners invalidate caches or
 * rebuild projections, so an extra call (e.g. after a rollback) is harmless.
 */
export class ChangeFeed {
  readonly origin = newId();
  private readonly events = new EventEmitter();
  private lastSeenId = 0;
  private lastDataVersion = -1;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Database,
    /** Null on PostgreSQL: there every poll reads the table (docs/postgres.md, What is left). */
    private readonly sqlite: SqliteDatabase.Database | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.events.setMaxListeners(0);
  }

  /** Records a change inside the caller's transaction and tells this process's listeners once it commits. */
  async publish(executor: Executor, topic: string, key: string | null = null): Promise<void> {
    await executor
      .insertInto('change_feed')
      .values({ topic, key, origin: this.origin, created_at: this.clock.now().toISOString() })
      .execute();
    afterCommit(executor, () => this.emit(topic, key));
  }

  subscribe(topic: string, listener: ChangeListener): () => void {
    this.events.on(topic, listener);
    return () => this.events.off(topic, listener);
  }

  private emit(topic: string, key: string | null): void {
    for (const listener of this.events.listeners(topic) as ChangeListener[]) {
      try {
        listener(key);
      } catch (err) {
        this.logger.error('change listener failed', { topic, err });
      }
    }
  }

  /** Starts watching for other processes' commits. */
  async start(intervalMs = 200): Promise<void> {
    const last = await this.db
      .selectFrom('change_feed')
      .select((eb) => eb.fn.max('id').as('max'))
      .executeTakeFirst();
    this.lastSeenId = Number(last?.max ?? 0);
    this.lastDataVersion = this.dataVersion();
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private dataVersionStatement: SqliteDatabase.Statement | null = null;

  private dataVersion(): number {
    // PostgreSQL has no such counter: a version that always moves makes every poll read the table.
    if (!this.sqlite) return this.lastDataVersion + 1;
    // Prepared once: catchUp reads it before every cached read.
    this.dataVersionStatement ??= this.sqlite.prepare('PRAGMA data_version').pluck();
    return this.dataVersionStatement.get() as number;
  }

  private polling: Promise<void> | null = null;

  /**
   * Replays other processes' commits now instead of at the next tick, for a cache that must
   * never serve what another process has just changed (docs/mcp.md, Performance). One pragma
   * read when nothing changed; nothing before start() (a process that does not watch the feed).
   */
  catchUp(): Promise<void> | undefined {
    if (this.polling) return this.polling;
    if (!this.timer || this.dataVersion() === this.lastDataVersion) return undefined;
    return this.poll();
  }

  /** One poll: cheap when nothing changed (a pragma read). Exposed for tests. Never overlaps itself. */
  poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => (this.polling = null));
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    try {
      const version = this.dataVersion();
      if (version === this.lastDataVersion) return;
      this.lastDataVersion = version;
      // Page through everything new: a burst larger than one page (a bulk revocation) must not
      // wait for some other commit to be noticed.
      for (;;) {
        const rows = await this.db
          .selectFrom('change_feed')
          .select(['id', 'topic', 'key', 'origin'])
          .where('id', '>', this.lastSeenId)
          .orderBy('id')
          .limit(CHANGE_FEED_PAGE)
          .execute();
        for (const row of rows) {
          this.lastSeenId = row.id;
          if (row.origin !== this.origin) this.emit(row.topic, row.key);
        }
        if (rows.length < CHANGE_FEED_PAGE) break;
      }
    } catch (err) {
      this.logger.error('change feed poll failed', { err });
    }
  }

  /** Drops rows every process has long since seen. */
  async prune(olderThanMs = 3_600_000): Promise<void> {
    const cutoff = new Date(this.clock.now().getTime() - olderThanMs).toISOString();
    await this.db.deleteFrom('change_feed').where('created_at', '<', cutoff).execute();
  }
}
