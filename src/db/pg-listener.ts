import type { Client } from 'pg';
import type { Logger } from '../lib/logger.js';
import { loadPg } from './postgres.js';

/** First wait before reconnecting a lost LISTEN connection, doubled up to the maximum. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

export interface ListenHandlers {
  /** After every (re)connect, once LISTEN is in place: notifications may have been missed. */
  onConnect(): void;
  onNotification(payload: string): void;
}

/**
 * One dedicated PostgreSQL session per process that LISTENs on a channel (docs/postgres.md,
 * Change feed). A pooled connection cannot: LISTEN belongs to the session. A lost connection
 * never crashes the process; it reconnects with a growing wait until stop().
 */
export class PgListener {
  private client: Client | null = null;
  private stopped = false;
  private backoffMs = FIRST_BACKOFF_MS;
  private retry: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly handlers: ListenHandlers,
    private readonly logger: Logger,
  ) {}

  /** True while the session is up and listening. */
  get listening(): boolean {
    return this.client !== null;
  }

  /** Connects once; resolves after the first attempt either way (later ones run in the background). */
  start(): Promise<void> {
    this.stopped = false;
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    // keepAlive: a silently dead network path must end the session, so it reconnects.
    const pg = await loadPg();
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: 5_000 });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      client.removeAllListeners('notification');
      client.end().catch(() => {});
      if (!this.stopped) {
        this.logger.warn('change feed connection lost; reconnecting', { err: err?.message });
        this.scheduleReconnect();
      }
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === this.channel && message.payload) this.handlers.onNotification(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      onLost(err as Error);
      return;
    }
    if (this.stopped || lost) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.backoffMs = FIRST_BACKOFF_MS;
    this.handlers.onConnect();
  }

  private scheduleReconnect(): void {
    if (this.retry || this.stopped) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.start();
    }, wait);
    this.retry.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('notification');
      await client.end().catch(() => {});
    }
  }
}
