import { SseStream, sseFrame as frame } from '../http/sse.js';
import type { ChangeFeed } from '../db/change-feed.js';
import type { CursorCodec } from '../http/pagination.js';
import type { Logger } from '../lib/logger.js';
import { NOTIFICATIONS_TOPIC, type NotificationsService } from './service.js';

/** A user's open streams beyond this close the oldest one (its tab is the likeliest stale). */
export const MAX_STREAMS_PER_USER = 5;
/** Notifications replayed after Last-Event-ID, and pushed per pass; more waits for the next pass. */
const BATCH = 100;

interface Connection {
  userId: string;
  stream: SseStream;
  /** Highest seq already sent (or skipped at start): the next pass sends what is newer. */
  lastSeq: number;
  lastCount: number | null;
  timer: NodeJS.Timeout;
  stillValid: () => Promise<boolean>;
  closed: boolean;
}

interface Channel {
  connections: Connection[];
  running: boolean;
  again: boolean;
}

export interface OpenOptions {
  userId: string;
  lastEventId?: string | null;
  /** Whether the credential that opened the stream still holds (not expired, not revoked). */
  stillValid: () => Promise<boolean>;
}

/**
 * Live delivery over Server-Sent Events. Streams do not poll the database: they wake on
 * NOTIFICATIONS_TOPIC (key = user id), which the change feed raises for writes of this process
 * at once and for other processes' commits (the CLI) within its poll interval. A wake-up sends
 * what is newer than each stream's position, then the unread count when it moved. Event ids
 * are signed cursors, so Last-Event-ID resumes exactly after the last notification seen.
 */
export class NotificationStreams {
  private readonly channels = new Map<string, Channel>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly deps: {
      notifications: NotificationsService;
      changes: ChangeFeed;
      cursors: CursorCodec;
      logger: Logger;
      heartbeatMs: number;
    },
  ) {}

  private eventId(userId: string, seq: number): string {
    return this.deps.cursors.encode(`notifications-stream:${userId}`, { s: seq });
  }

  /** The seq a Last-Event-ID names, or null when it is absent, foreign or forged (start fresh). */
  private resumeSeq(userId: string, lastEventId: string | null | undefined): number | null {
    if (!lastEventId) return null;
    try {
      const position = this.deps.cursors.decode<{ s?: unknown }>(`notifications-stream:${userId}`, lastEventId);
      return typeof position.s === 'number' && Number.isSafeInteger(position.s) && position.s >= 0 ? position.s : null;
    } catch {
      return null;
    }
  }

  async open(options: OpenOptions): Promise<SseStream> {
    const { userId } = options;
    const stream = new SseStream();
    // retry: how long a browser waits before reconnecting; the comment flushes the headers.
    stream.send(`retry: 3000\n: connected\n\n`);
    const resumed = this.resumeSeq(userId, options.lastEventId);
    const lastSeq = resumed ?? (await this.deps.notifications.latestSeq(userId));
    const connection: Connection = {
      userId,
      stream,
      lastSeq,
      lastCount: null,
      stillValid: options.stillValid,
      closed: false,
      timer: setInterval(() => void this.heartbeat(connection), this.deps.heartbeatMs),
    };
    connection.timer.unref();
    stream.once('close', () => this.drop(connection));

    let channel = this.channels.get(userId);
    if (!channel) {
      channel = { connections: [], running: false, again: false };
      this.channels.set(userId, channel);
    }
    channel.connections.push(connection);
    while (channel.connections.length > MAX_STREAMS_PER_USER) this.close(channel.connections[0], 'superseded');
    this.unsubscribe ??= this.deps.changes.subscribe(NOTIFICATIONS_TOPIC, (key) => {
      // Listeners run inside the writer's transaction: read after it has committed.
      if (key) setImmediate(() => void this.wake(key));
      else for (const id of this.channels.keys()) setImmediate(() => void this.wake(id));
    });
    // First pass: the replay after Last-Event-ID (if any) and the current unread count.
    void this.wake(userId);
    return stream;
  }

  private async heartbeat(connection: Connection): Promise<void> {
    if (connection.closed) return;
    let valid = false;
    try {
      valid = await connection.stillValid();
    } catch (err) {
      this.deps.logger.warn('notification stream credential check failed', { err });
    }
    if (!valid) return this.close(connection, 'credentials_expired');
    connection.stream.send(': heartbeat\n\n');
  }

  /** Sends each of the user's streams what changed. One pass at a time per user; wake-ups
   * during a pass run it once more, so bursts coalesce and nothing is missed. */
  private async wake(userId: string): Promise<void> {
    const channel = this.channels.get(userId);
    if (!channel) return;
    if (channel.running) {
      channel.again = true;
      return;
    }
    channel.running = true;
    try {
      do {
        channel.again = false;
        const live = channel.connections.filter((c) => !c.closed);
        if (live.length === 0) break;
        const from = Math.min(...live.map((c) => c.lastSeq));
        const fresh = await this.deps.notifications.listAfter(userId, from, BATCH);
        for (const connection of live) {
          for (const { seq, notification } of fresh) {
            if (seq > connection.lastSeq)
              connection.stream.send(frame('notification', notification, this.eventId(userId, seq)));
          }
          if (fresh.length > 0) connection.lastSeq = Math.max(connection.lastSeq, fresh[fresh.length - 1].seq);
        }
        if (fresh.length === BATCH) channel.again = true;
        const count = await this.deps.notifications.unreadCount(userId);
        for (const connection of live) {
          if (connection.lastCount !== count) {
            connection.stream.send(frame('unread-count', { count }));
            connection.lastCount = count;
          }
        }
      } while (channel.again);
    } catch (err) {
      this.deps.logger.error('notification stream push failed', { userId, err });
    } finally {
      channel.running = false;
      if (channel.connections.length === 0 && this.channels.get(userId) === channel) this.channels.delete(userId);
    }
  }

  /** Ends one stream with a final event that says why (clients reconnect only if they should). */
  close(connection: Connection, reason: string): void {
    if (connection.closed) return;
    connection.stream.send(frame('close', { reason }));
    connection.stream.end();
    this.drop(connection);
  }

  private drop(connection: Connection): void {
    connection.closed = true;
    clearInterval(connection.timer);
    const channel = this.channels.get(connection.userId);
    if (!channel) return;
    channel.connections = channel.connections.filter((c) => c !== connection);
    if (channel.connections.length === 0 && !channel.running) this.channels.delete(connection.userId);
    if (this.channels.size === 0 && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = null;
    }
  }

  /** Server stop: every stream ends now, so a graceful stop does not wait out its timeout. */
  closeAll(reason = 'server_stopping'): void {
    for (const channel of [...this.channels.values()])
      for (const connection of [...channel.connections]) this.close(connection, reason);
  }
}
