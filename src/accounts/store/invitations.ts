import type { Insertable, Updateable } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { AccountInvitationsTable } from '../tables.js';

/** Every SQL statement over account invitations. */

export const findInvitationById = (db: Executor, id: string) =>
  db.selectFrom('account_invitations').selectAll().where('id', '=', id).executeTakeFirst();

export const findInvitation = (db: Executor, accountId: string, invitationId: string) =>
  db
    .selectFrom('account_invitations')
    .selectAll()
    .where('id', '=', invitationId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();

/** A pending invitation to the email that has not expired at `nowIso`. */
export const findLivePendingInvitation = (db: Executor, accountId: string, email: string, nowIso: string) =>
  db
    .selectFrom('account_invitations')
    .select('id')
    .where('account_id', '=', accountId)
    .where('email', '=', email)
    .where('status', '=', 'pending')
    .where('expires_at', '>', nowIso)
    .executeTakeFirst();

/** Revokes every pending invitation of the account to the email (expired ones included). */
export async function revokePendingInvitationsTo(
  db: Executor,
  accountId: string,
  email: string,
  nowIso: string,
): Promise<void> {
  await db
    .updateTable('account_invitations')
    .set({ status: 'revoked', revoked_at: nowIso })
    .where('account_id', '=', accountId)
    .where('email', '=', email)
    .where('status', '=', 'pending')
    .execute();
}

export async function insertInvitation(db: Executor, row: Insertable<AccountInvitationsTable>): Promise<void> {
  await db.insertInto('account_invitations').values(row).execute();
}

export async function updateInvitation(
  db: Executor,
  id: string,
  set: Updateable<AccountInvitationsTable>,
): Promise<void> {
  await db.updateTable('account_invitations').set(set).where('id', '=', id).execute();
}

/** A resend's new link and period; the count moves in the statement itself. The new count. */
export async function recordInvitationResent(
  db: Executor,
  id: string,
  set: { token_id: string; expires_at: string },
): Promise<number> {
  const row = await db
    .updateTable('account_invitations')
    .set((eb) => ({ ...set, sent_count: eb('sent_count', '+', 1) }))
    .where('id', '=', id)
    .returning('sent_count')
    .executeTakeFirstOrThrow();
  return row.sent_count;
}

export const listInvitations = (db: Executor, accountId: string, limit: number, offset: number) =>
  db
    .selectFrom('account_invitations')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();

export async function countInvitations(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('account_invitations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
