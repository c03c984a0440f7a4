import type { Insertable } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { AccountSeatReleasesTable } from '../tables.js';

/** Every SQL statement over seat releases. */

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
