import type { Insertable } from 'kysely';
import type { Executor } from '../tx.js';
import type { MailOutboxTable } from '../kernel-tables.js';

/** Every statement of the mail outbox; the mailer (src/lib/mailer.ts) holds the rules. */

export const insertOutboxMail = (db: Executor, row: Insertable<MailOutboxTable>) =>
  db.insertInto('mail_outbox').values(row).execute();

/** Many mails in one statement (a fan-out's batch): the caller keeps batches within the engines' parameter limits. */
export const insertOutboxMails = (db: Executor, rows: Insertable<MailOutboxTable>[]) =>
  db.insertInto('mail_outbox').values(rows).execute();

/** Forgets every mail of these kinds to one address (its owner asked to be forgotten); how many. */
export async function deleteOutboxMailTo(db: Executor, to: string, kinds: readonly string[]): Promise<number> {
  const res = await db
    .deleteFrom('mail_outbox')
    .where('to_address', '=', to)
    .where('kind', 'in', [...kinds])
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Mails of one kind queued after `sinceIso`, to anyone: how many, and the oldest's time. */
export const countKindSince = (db: Executor, kind: string, sinceIso: string) =>
  db
    .selectFrom('mail_outbox')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('kind', '=', kind)
    .where('created_at', '>', sinceIso)
    .executeTakeFirstOrThrow();

/** Mails of one kind to one address queued after `sinceIso`: how many, and the oldest's time. */
export const countQueuedSince = (db: Executor, to: string, kind: string, sinceIso: string) =>
  db
    .selectFrom('mail_outbox')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('to_address', '=', to)
    .where('kind', '=', kind)
    .where('created_at', '>', sinceIso)
    .executeTakeFirstOrThrow();

/** The oldest unsent mails with attempts left and no live lease, at most `limit`. */
export const pendingOutboxMail = (db: Executor, maxAttempts: number, limit: number, nowIso: string) =>
  db
    .selectFrom('mail_outbox')
    .selectAll()
    .where('sent_at', 'is', null)
    .where('attempts', '<', maxAttempts)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', nowIso)]))
    .orderBy('created_at')
    .limit(limit)
    .execute();

/**
 * Claims an unsent mail for one delivery attempt under a lease until `leaseUntilIso`: one
 * conditional update, so of several processes (nodes, the CLI) exactly one wins, and none
 * claims it again while the winner may still be sending (docs/scaling.md, Mail). True for the
 * winner.
 */
export async function claimOutboxMail(
  db: Executor,
  id: string,
  maxAttempts: number,
  nowIso: string,
  leaseUntilIso: string,
): Promise<boolean> {
  const claim = await db
    .updateTable('mail_outbox')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), claimed_until: leaseUntilIso }))
    .where('id', '=', id)
    .where('sent_at', 'is', null)
    .where('attempts', '<', maxAttempts)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', nowIso)]))
    .executeTakeFirst();
  return Number(claim.numUpdatedRows) === 1;
}

export const markOutboxMailSent = (db: Executor, id: string, at: string) =>
  db.updateTable('mail_outbox').set({ sent_at: at, last_error: null }).where('id', '=', id).execute();

/** A failed attempt: the reason, and the lease given up so the retry job may claim it. */
export const recordOutboxMailError = (db: Executor, id: string, reason: string) =>
  db.updateTable('mail_outbox').set({ last_error: reason, claimed_until: null }).where('id', '=', id).execute();

/** The newest mails first, at most `limit`. */
export const latestOutboxMail = (db: Executor, limit: number) =>
  db.selectFrom('mail_outbox').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
