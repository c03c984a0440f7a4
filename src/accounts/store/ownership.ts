import type { Insertable } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { AccountOwnershipTransfersTable } from '../tables.js';

/** Every SQL statement over ownership transfers. */

export const findPendingTransfer = (db: Executor, accountId: string) =>
  db
    .selectFrom('account_ownership_transfers')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', '=', 'pending')
    .executeTakeFirst();

export async function insertTransfer(db: Executor, row: Insertable<AccountOwnershipTransfersTable>): Promise<void> {
  await db.insertInto('account_ownership_transfers').values(row).execute();
}

/** Moves one transfer to accepted or cancelled. */
export async function decideTransfer(
  db: Executor,
  id: string,
  status: 'accepted' | 'cancelled',
  decidedAt: string,
): Promise<void> {
  await db
    .updateTable('account_ownership_transfers')
    .set({ status, decided_at: decidedAt })
    .where('id', '=', id)
    .execute();
}

/** Cancels the account's pending transfers; only those from or to the user when one is given. */
export async function cancelPendingTransfers(
  db: Executor,
  accountId: string,
  decidedAt: string,
  userId?: string,
): Promise<void> {
  let q = db
    .updateTable('account_ownership_transfers')
    .set({ status: 'cancelled', decided_at: decidedAt })
    .where('account_id', '=', accountId)
    .where('status', '=', 'pending');
  if (userId !== undefined)
    q = q.where((eb) => eb.or([eb('to_user_id', '=', userId), eb('from_user_id', '=', userId)]));
  await q.execute();
}
