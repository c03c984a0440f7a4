import type { Insertable } from 'kysely';
import type { Executor } from '../db/tx.js';
import type { BillingCheckoutsTable } from './tables.js';

/** Every SQL statement over the billing tables (account links, checkouts, applied events). */

export const findAccountLink = (db: Executor, accountId: string) =>
  db.selectFrom('billing_accounts').selectAll().where('account_id', '=', accountId).executeTakeFirst();

export async function upsertAccountLink(
  db: Executor,
  row: {
    account_id: string;
    provider: string;
    customer_id: string | null;
    seat_item_id: string | null;
    updated_at: string;
  },
): Promise<void> {
  await db
    .insertInto('billing_accounts')
    .values(row)
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        provider: row.provider,
        customer_id: row.customer_id,
        seat_item_id: row.seat_item_id,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function insertCheckout(db: Executor, row: Insertable<BillingCheckoutsTable>): Promise<void> {
  await db.insertInto('billing_checkouts').values(row).execute();
}

export const findCheckoutBySession = (db: Executor, provider: string, sessionId: string) =>
  db
    .selectFrom('billing_checkouts')
    .selectAll()
    .where('provider', '=', provider)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();

/**
 * Marks an open checkout credited, in one conditional UPDATE: true for the one caller that
 * flipped it, so the wallet is credited once whatever the number of deliveries.
 */
export async function markCheckoutCredited(db: Executor, id: string, eventId: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('billing_checkouts')
    .set({ status: 'credited', credited_at: at, credit_event_id: eventId })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records a provider event id; false when it was already applied (a redelivery). */
export async function recordEvent(
  db: Executor,
  row: { provider: string; event_id: string; type: string; received_at: string },
): Promise<boolean> {
  const result = await db
    .insertInto('billing_events')
    .values(row)
    .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) !== 0;
}
