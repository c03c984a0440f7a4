import { EventEmitter } from 'node:events';
import type SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { newId } from '../lib/ids.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Database } from './connection.js';
import { afterCommit, type Executor } from './tx.js';
import { PgListener } from './pg-listener.js';

/** Rows read per query when catching up. */
export const CHANGE_FEED_PAGE = 1_000;

export type ChangeListener = (key: string | null) => void;

/** The PostgreSQL channel every Gantry process of one database NOTIFYs and LISTENs on. */
const CHANNEL = 'gantry_changes';
/** The topic of poll()'s own marker notification; no listener subscribes to it. */
const MARKER_TOPIC = '~marker';

interface Notice {
  /** topic, key, origin */
  t: string;
  k: string | null;
  o: string;
}

/**
 * How a change made by one process reaches the others on the same database within a second
 * (docs/interface.md, Operations: CLI changes are visible to the running server). A writer records
 * (topic, key) in change_feed inside its own transaction and notifies its own listeners once
 * it commits (tx.ts, afterCommit); every other process watches `PRAGMA data_version`, which moves when another
 * connection commits, and replays the rows it has not seen. Listeners invalidate caches or
 * rebuild projections, so an extra call (e.g. after a rollback) is harmless.
 *
 * On PostgreSQL no table is written: publish sends pg_notify inside the writer's transaction,
 * which PostgreSQL delivers at commit only and in commit order, and one dedicated session per
 * process LISTENs (pg-listener.ts). Every (re)connect tells every listener "everything
 * changed" (key null), since notifications sent while it was away are lost (docs/postgres.md,
 * Change feed). Ids that commit out of order cannot make it skip anything, as a table poll can.
 */
export class ChangeFeed {
  readonly origin = newId();
  private readonly events = new EventEmitter();
  private lastSeenId = 0;
  private lastDataVersion = -1;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Database,
    /** Null on PostgreSQL. */
    private readonly sqlite: SqliteDatabase.Database | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** The PostgreSQL URL to LISTEN on; null on SQLite. */
    private readonly listenUrl: string | null = null,
  ) {
    this.events.setMaxListeners(0);
  }

  private listener: PgListener | null = null;
  private readonly markers = new Map<string, () => void>();

  /** Records a change inside the caller's transaction and tells this process's listeners once it commits. */
  async publish(executor: Executor, topic: string, key: string | null = null): Promise<void> {
    if (this.listenUrl) {
      await this.notify(executor, { t: topic, k: key, o: this.origin });
    } else {
      await executor
        .insertInto('change_feed')
        .values({ topic, key, origin: this.origin, created_at: this.clock.now().toISOString() })
        .execute();
    }
    afterCommit(executor, () => this.emit(topic, key));
  }

  private async notify(executor: Executor, notice: Notice): Promise<void> {
    await sql`select pg_notify(${CHANNEL}, ${JSON.stringify(notice)})`.execute(executor);
  }

  /**
   * PostgreSQL only: whether this process's LISTEN session is up (readiness). Null on SQLite
   * and before start(), where nothing listens.
   */
  get listenState(): 'up' | 'down' | null {
    if (!this.listener) return null;
    return this.listener.listening ? 'up' : 'down';
  }

  private onNotification(payload: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      return; // not ours
    }
    if (notice.t === MARKER_TOPIC) {
      this.markers.get(notice.k ?? '')?.();
      return;
    }
    if (notice.o !== this.origin) this.emit(notice.t, notice.k);
  }

  /** After a (re)connect: whatever was sent meanwhile is lost, so every cache forgets everything. */
  private forgetEverything(): void {
    for (const topic of this.events.eventNames()) this.emit(String(topic), null);
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
    if (this.listenUrl) {
      this.listener ??= new PgListener(
        this.listenUrl,
        CHANNEL,
        { onConnect: () => this.forgetEverything(), onNotification: (payload) => this.onNotification(payload) },
        this.logger,
      );
      await this.listener.start();
      return;
    }
    const last = await this.db
      .selectFrom('change_feed')
      .select((eb) => eb.fn.max('id').as('max'))
      .executeTakeFirst();
    this.lastSeenId = Number(last?.max ?? 0);
    this.lastDataVersion = this.dataVersion();
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const listener = this.listener;
    this.listener = null;
    await listener?.stop();
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
    // PostgreSQL pushes notifications as they commit; there is nothing cheap to check first.
    if (this.listenUrl) return undefined;
    if (this.polling) return this.polling;
    if (!this.timer || this.dataVersion() === this.lastDataVersion) return undefined;
    return this.poll();
  }

  /**
   * One poll: cheap when nothing changed (a pragma read). Exposed for tests. Never overlaps itself.
   * On PostgreSQL: NOTIFYs a marker and waits for it to come back, so every notification
   * committed before it has been delivered (one queue, commit order).
   */
  poll(): Promise<void> {
    if (this.listenUrl) return this.roundTrip();
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

  private async roundTrip(): Promise<void> {
    if (!this.listener?.listening) return;
    const id = newId();
    const back = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5_000); // a lost session: its reconnect forgets everything anyway
      this.markers.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    try {
      await this.notify(this.db, { t: MARKER_TOPIC, k: id, o: this.origin });
      await back;
    } catch (err) {
      this.logger.error('change feed poll failed', { err });
    } finally {
      this.markers.delete(id);
    }
  }

  /** Drops rows every process has long since seen (SQLite; PostgreSQL writes none). */
  async prune(olderThanMs = 3_600_000): Promise<void> {
    const cutoff = new Date(this.clock.now().getTime() - olderThanMs).toISOString();
    await this.db.deleteFrom('change_feed').where('created_at', '<', cutoff).execute();
  }
}
