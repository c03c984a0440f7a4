import type { Insertable } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { AccountSeatReleasesTable } from '../tables.js';

/** Every SQL statement over seat releases and the billing webhook's seen events. */

export async function insertSeatRelease(db: Executor, row: Insertable<AccountSeatReleasesTable>): Promise<void> {
  await db.insertInto('account_seat_releases').values(row).execute();
}

export const findSeatRelease = (db: Executor, id: string) =>
  db.selectFrom('account_seat_releases').selectAll().where('id', '=', id).executeTakeFirst();

export async function setSeatReleaseStatus(
  db: Executor,
  id: string,
  status: string,
  confirmedAt?: string | null,
): Promise<void> {
  await db
    .updateTable('account_seat_releases')
    .set(confirmedAt === undefined ? { status } : { status, confirmed_at: confirmedAt })
    .where('id', '=', id)
    .execute();
}

/** Records a webhook event id; false when it was already seen (a replay). */
export async function recordWebhookEvent(
  db: Executor,
  row: { id: string; type: string; received_at: string },
): Promise<boolean> {
  const seen = await db
    .insertInto('billing_webhook_events')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(seen.numInsertedOrUpdatedRows ?? 0) !== 0;
}
