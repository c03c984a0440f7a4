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
}

export interface OutboxEntry {
  id: string;
  to: string;
  subject: string;
  text: string;
  kind: string;
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

  async enqueue(executor: Executor, message: MailMessage): Promise<string> {
    const id = newId();
    await outbox.insertOutboxMail(executor, {
      id,
      to_address: message.to,
      subject: message.subject,
      body_text: message.text,
      kind: message.kind,
      created_at: this.clock.now().toISOString(),
      sent_at: null,
      attempts: 0,
      last_error: null,
      claimed_until: null,
    });
    return id;
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
   * call during a run asks for one more pass after it.
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
          sent += await this.deliverBatch(maxAttempts);
        } catch (err) {
          this.logger.error('mail delivery run failed', { err });
          break;
        }
      } while (this.again);
      return sent;
    })().finally(() => (this.delivering = null));
    return this.delivering;
  }

  private async deliverBatch(maxAttempts: number): Promise<number> {
    const pending = await outbox.pendingOutboxMail(this.db, maxAttempts, 50, this.clock.now().toISOString());
    if (pending.length === 0) return 0;
    const transport = await this.transport();
    let sent = 0;
    for (const row of pending) {
      // Claim the row first, under a lease: of several nodes and a CLI process delivering at
      // once, one sends, and no other takes it over while that send may still be in flight.
      const now = this.clock.now();
      const leaseUntil = new Date(now.getTime() + MAIL_LEASE_MS).toISOString();
      if (!(await outbox.claimOutboxMail(this.db, row.id, maxAttempts, now.toISOString(), leaseUntil))) continue;
      try {
        await transport.sendMail({ from: this.from, to: row.to_address, subject: row.subject, text: row.body_text });
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
    return sent;
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
      createdAt: r.created_at,
      sentAt: r.sent_at,
      attempts: r.attempts,
      lastError: r.last_error,
    }));
  }
}
