import type { Insertable } from 'kysely';
import type { Executor } from '../tx.js';
import type { MailOutboxTable } from '../kernel-tables.js';

/** Every statement of the mail outbox; the mailer (src/lib/mailer.ts) holds the rules. */

export const insertOutboxMail = (db: Executor, row: Insertable<MailOutboxTable>) =>
  db.insertInto('mail_outbox').values(row).execute();

/** Mails of one kind to one address queued after `sinceIso`: how many, and the oldest's time. */
export const countQueuedSince = (db: Executor, to: string, kind: string, sinceIso: string) =>
  db
    .selectFrom('mail_outbox')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('to_address', '=', to)
    .where('kind', '=', kind)
    .where('created_at', '>', sinceIso)
    .executeTakeFirstOrThrow();

/** The oldest unsent mails with attempts left, at most `limit`. */
export const pendingOutboxMail = (db: Executor, maxAttempts: number, limit: number) =>
  db
    .selectFrom('mail_outbox')
    .selectAll()
    .where('sent_at', 'is', null)
    .where('attempts', '<', maxAttempts)
    .orderBy('created_at')
    .limit(limit)
    .execute();

/**
 * Claims an unsent mail for one delivery attempt: attempts moves only if no other process
 * moved it since `attempts` was read. True for the one claimant that wins.
 */
export async function claimOutboxMail(db: Executor, id: string, attempts: number): Promise<boolean> {
  const claim = await db
    .updateTable('mail_outbox')
    .set({ attempts: attempts + 1 })
    .where('id', '=', id)
    .where('attempts', '=', attempts)
    .where('sent_at', 'is', null)
    .executeTakeFirst();
  return Number(claim.numUpdatedRows) === 1;
}

export const markOutboxMailSent = (db: Executor, id: string, at: string) =>
  db.updateTable('mail_outbox').set({ sent_at: at, last_error: null }).where('id', '=', id).execute();

export const recordOutboxMailError = (db: Executor, id: string, reason: string) =>
  db.updateTable('mail_outbox').set({ last_error: reason }).where('id', '=', id).execute();

/** The newest mails first, at most `limit`. */
export const latestOutboxMail = (db: Executor, limit: number) =>
  db.selectFrom('mail_outbox').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
