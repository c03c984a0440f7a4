import nodemailer, { type Transporter } from 'nodemailer';
import type { Clock } from './clock.js';
import { newId } from './ids.js';
import type { Logger } from './logger.js';
import type { Database } from '../db/connection.js';
import type { Executor } from '../db/tx.js';

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
 * One way out for mail. Every message is written to the outbox in the caller's
 * transaction (so nothing acknowledged is lost); with GANTRY_SMTP_URL set, `deliver`
 * sends what is pending after the transaction commits, and the retry job picks up failures.
 */
export class Mailer {
  private readonly transport: Transporter | null;

  constructor(
    private readonly db: Database,
    smtpUrl: string | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly from = 'Gantry <no-reply@gantry.local>',
  ) {
    this.transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : null;
  }

  get smtpEnabled(): boolean {
    return this.transport !== null;
  }

  async enqueue(executor: Executor, message: MailMessage): Promise<string> {
    const id = newId();
    await executor
      .insertInto('mail_outbox')
      .values({ id, to_address: message.to, subject: message.subject, body_text: message.text, kind: message.kind, created_at: this.clock.now().toISOString(), sent_at: null, attempts: 0, last_error: null })
      .execute();
    return id;
  }

  /** Sends pending mail over SMTP (no-op without SMTP). Never throws: failures stay queued. */
  async deliverPending(maxAttempts = 8): Promise<number> {
    if (!this.transport) return 0;
    const pending = await this.db.selectFrom('mail_outbox').selectAll().where('sent_at', 'is', null).where('attempts', '<', maxAttempts).orderBy('created_at').limit(50).execute();
    let sent = 0;
    for (const row of pending) {
      try {
        await this.transport.sendMail({ from: this.from, to: row.to_address, subject: row.subject, text: row.body_text });
        await this.db.updateTable('mail_outbox').set({ sent_at: this.clock.now().toISOString(), attempts: row.attempts + 1, last_error: null }).where('id', '=', row.id).execute();
        sent++;
      } catch (err) {
        this.logger.warn('mail delivery failed', { mailId: row.id, kind: row.kind, error: (err as Error).message });
        await this.db.updateTable('mail_outbox').set({ attempts: row.attempts + 1, last_error: (err as Error).message.slice(0, 500) }).where('id', '=', row.id).execute();
      }
    }
    return sent;
  }

  async list(limit = 20): Promise<OutboxEntry[]> {
    const rows = await this.db.selectFrom('mail_outbox').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map((r) => ({ id: r.id, to: r.to_address, subject: r.subject, text: r.body_text, kind: r.kind, createdAt: r.created_at, sentAt: r.sent_at, attempts: r.attempts, lastError: r.last_error }));
  }
}
