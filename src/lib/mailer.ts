import type { Transporter } from 'nodemailer';
import type { Clock } from './clock.js';
import { newId } from './ids.js';
import type { Logger } from './logger.js';
import type { Database } from '../db/connection.js';
import type { Executor } from '../db/tx.js';
import * as outbox from '../db/store/outbox.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** What the mail is for (magic_link, invitation...): shown by `gantry mail list`. */
  kind: string;
  /** Extra headers (List-Unsubscribe, RFC 8058): names of letters, digits and dashes, values on one line. */
  headers?: Readonly<Record<string, string>>;
}

export interface OutboxEntry {
  id: string;
  to: string;
  subject: string;
  text: string;
  kind: string;
  headers: Record<string, string>;
  createdAt: string;
  sentAt: string | null;
  attempts: number;
  lastError: string | null;
}

/**
 * How long a claimed mail stays with the process sending it: longer than one SMTP attempt can
 * take (the transport's timeouts add up to 40 s), so a lease never runs out mid-send.
 */
const MAIL_LEASE_MS = 120_000;
/** Mails claimed per pass; passes go on while whole batches go out without a failure. */
const DELIVERY_BATCH = 50;
/** Headers the mailer writes itself: a message's extra headers never replace them. */
const OWN_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'content-type',
  'mime-version',
]);

/**
 * The extra headers as stored (JSON), refusing what could forge or split a header: a caller's
 * bug, so it throws instead of sending something else than was meant.
 */
function headersText(headers: MailMessage['headers']): string | null {
  if (!headers || Object.keys(headers).length === 0) return null;
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[A-Za-z][A-Za-z0-9-]{0,62}$/.test(name) || OWN_HEADERS.has(name.toLowerCase()))
      throw new Error(`mail header ${JSON.stringify(name)} cannot be set`);
    if (/[\r\n]/.test(value)) throw new Error(`mail header ${name} must be one line`);
  }
  return JSON.stringify(headers);
}

const headersOf = (text: string | null): Record<string, string> =>
  text ? (JSON.parse(text) as Record<string, string>) : {};

/**
 * One way out for mail. Every message is written to the outbox in the caller's
 * transaction (so nothing acknowledged is lost); with GANTRY_SMTP_URL set, `deliver`
 * sends what is pending after the transaction commits, and the retry job picks up failures.
 */
export class Mailer {
  private transportPromise: Promise<Transporter> | null = null;

  constructor(
    private readonly db: Database,
    private readonly smtpUrl: string | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** The sender: the operator's brand as its name (docs/operations.md, Branding); nodemailer encodes it. */
    private readonly from: { name: string; address: string } = { name: 'Gantry', address: 'no-reply@gantry.local' },
  ) {}

  /** nodemailer is loaded only when SMTP is configured and there is mail to send. */
  private transport(): Promise<Transporter> {
    this.transportPromise ??= import('nodemailer').then((mod) => {
      const nodemailer = mod.default;
      // Short timeouts: delivery runs in the background and a dead relay must not pile up sockets.
      return nodemailer.createTransport(this.smtpUrl!, {
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000,
      } as object);
    });
    return this.transportPromise;
  }

  private delivering: Promise<number> | null = null;
  private again = false;

  get smtpEnabled(): boolean {
    return this.smtpUrl !== null;
  }

  private row(message: MailMessage, createdAt: string) {
    return {
      id: newId(),
      to_address: message.to,
      subject: message.subject,
      body_text: message.text,
      kind: message.kind,
      created_at: createdAt,
      sent_at: null,
      attempts: 0,
      last_error: null,
      claimed_until: null,
      headers: headersText(message.headers),
    };
  }

  async enqueue(executor: Executor, message: MailMessage): Promise<string> {
    const row = this.row(message, this.clock.now().toISOString());
    await outbox.insertOutboxMail(executor, row);
    return row.id;
  }

  /**
   * Many mails in the caller's transaction, one statement per 500 (a fan-out's batch): within
   * SQLite's and PostgreSQL's limits on bound values. `createdAt` (default now) is the time the
   * outbox sends in order of: the notices of successive events, queued by one run of a job,
   * keep the events' order when they carry the events' times (src/status/fanout.ts).
   */
  async enqueueMany(
    executor: Executor,
    messages: readonly MailMessage[],
    createdAt = this.clock.now().toISOString(),
  ): Promise<number> {
    const rows = messages.map((m) => this.row(m, createdAt));
    for (let i = 0; i < rows.length; i += 500) await outbox.insertOutboxMails(executor, rows.slice(i, i + 500));
    return rows.length;
  }

  /** Deletes every mail of these kinds to one address, sent or not: its owner asked to be forgotten. */
  forget(executor: Executor, to: string, kinds: readonly string[]): Promise<number> {
    return outbox.deleteOutboxMailTo(executor, to, kinds);
  }

  /** Mails of one kind to anyone since a moment (a quota over all recipients): how many, and the oldest's time. */
  async queuedOfKindSince(executor: Executor, kind: string, sinceIso: string) {
    const row = await outbox.countKindSince(executor, kind, sinceIso);
    return { count: Number(row.n), oldest: (row.oldest as string | null) ?? null };
  }

  /** Mails of one kind to one address queued since a moment (for quotas): how many, and the oldest's time. */
  async queuedSince(
    executor: Executor,
    to: string,
    kind: string,
    sinceIso: string,
  ): Promise<{ count: number; oldest: string | null }> {
    const row = await outbox.countQueuedSince(executor, to, kind, sinceIso);
    return { count: Number(row.n), oldest: (row.oldest as string | null) ?? null };
  }

  /**
   * Sends pending mail over SMTP (no-op without SMTP). Never throws: failures stay queued
   * for the retry job. One run at a time, so a message is never sent twice by two runs; a
   * call during a run asks for one more pass after it. A run goes on while whole batches go
   * out without a failure (a fan-out of thousands of mails drains in one run); a failure
   * leaves the rest to the retry job, so a dead relay is not hammered.
   */
  async deliverPending(maxAttempts = 8): Promise<number> {
    if (!this.smtpUrl) return 0;
    if (this.delivering) {
      this.again = true;
      return this.delivering;
    }
    this.delivering = (async () => {
      let sent = 0;
      do {
        this.again = false;
        try {
          for (;;) {
            const batch = await this.deliverBatch(maxAttempts);
            sent += batch.sent;
            if (batch.claimed < DELIVERY_BATCH || batch.sent < batch.claimed) break;
          }
        } catch (err) {
          this.logger.error('mail delivery run failed', { err });
          break;
        }
      } while (this.again);
      return sent;
    })().finally(() => (this.delivering = null));
    return this.delivering;
  }

  private async deliverBatch(maxAttempts: number): Promise<{ claimed: number; sent: number }> {
    const pending = await outbox.pendingOutboxMail(
      this.db,
      maxAttempts,
      DELIVERY_BATCH,
      this.clock.now().toISOString(),
    );
    if (pending.length === 0) return { claimed: 0, sent: 0 };
    const transport = await this.transport();
    let sent = 0;
    let claimed = 0;
    for (const row of pending) {
      // Claim the row first, under a lease: of several nodes and a CLI process delivering at
      // once, one sends, and no other takes it over while that send may still be in flight.
      const now = this.clock.now();
      const leaseUntil = new Date(now.getTime() + MAIL_LEASE_MS).toISOString();
      if (!(await outbox.claimOutboxMail(this.db, row.id, maxAttempts, now.toISOString(), leaseUntil))) continue;
      claimed++;
      try {
        await transport.sendMail({
          from: this.from,
          to: row.to_address,
          subject: row.subject,
          text: row.body_text,
          headers: headersOf(row.headers),
        });
        await outbox.markOutboxMailSent(this.db, row.id, this.clock.now().toISOString());
        sent++;
      } catch (err) {
        // The SMTP reply may echo the message; log only its first line, never the body.
        const reason = String((err as Error).message)
          .split('\n')[0]
          .slice(0, 300);
        this.logger.warn('mail delivery failed', { mailId: row.id, kind: row.kind, attempt: row.attempts + 1, reason });
        await outbox.recordOutboxMailError(this.db, row.id, reason);
      }
    }
    return { claimed, sent };
  }

  /** Waits for a delivery run in progress and closes the SMTP transport. */
  async close(): Promise<void> {
    await this.delivering;
    if (this.transportPromise) (await this.transportPromise).close();
  }

  async list(limit = 20): Promise<OutboxEntry[]> {
    const rows = await outbox.latestOutboxMail(this.db, limit);
    return rows.map((r) => ({
      id: r.id,
      to: r.to_address,
      subject: r.subject,
      text: r.body_text,
      kind: r.kind,
      headers: headersOf(r.headers),
      createdAt: r.created_at,
      sentAt: r.sent_at,
      attempts: r.attempts,
      lastError: r.last_error,
    }));
  }
}
