import type { Executor } from '../db/tx.js';
import type { StatusSubscriptionsTable } from './tables.js';

/** Every statement of status_subscriptions (docs/status.md, Subscriptions). */

export type SubscriptionRow = StatusSubscriptionsTable;

export const insertSubscription = (db: Executor, row: SubscriptionRow) =>
  db.insertInto('status_subscriptions').values(row).execute();
export const subscriptionById = (db: Executor, id: string) =>
  db.selectFrom('status_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
export const subscriptionByEmail = (db: Executor, email: string) =>
  db.selectFrom('status_subscriptions').selectAll().where('email', '=', email).executeTakeFirst();
export const subscriptionByConfirmHash = (db: Executor, hash: string) =>
  db.selectFrom('status_subscriptions').selectAll().where('confirm_token_hash', '=', hash).executeTakeFirst();
export const updateSubscription = (db: Executor, id: string, patch: Partial<SubscriptionRow>) =>
  db.updateTable('status_subscriptions').set(patch).where('id', '=', id).execute();

/** Confirms a pending subscription if it still holds this secret: of two racing uses, one wins. */
export async function confirmSubscription(db: Executor, id: string, hash: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('status_subscriptions')
    .set({ confirmed_at: at, confirm_token_hash: null, confirm_expires_at: null, updated_at: at })
    .where('id', '=', id)
    .where('confirm_token_hash', '=', hash)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function deleteSubscription(db: Executor, id: string): Promise<number> {
  const res = await db.deleteFrom('status_subscriptions').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export const allSubscriptions = (db: Executor) =>
  db.selectFrom('status_subscriptions').selectAll().orderBy('created_at').orderBy('id').execute();

/** Webhook subscriptions still delivered to on one host (its quota). */
export async function countActiveWebhooksOfHost(db: Executor, host: string): Promise<number> {
  const row = await db
    .selectFrom('status_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('webhook_host', '=', host)
    .where('disabled_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Email subscriptions never confirmed whose link has expired. */
export const expiredPending = (db: Executor, nowIso: string) =>
  db
    .selectFrom('status_subscriptions')
    .select(['id', 'email'])
    .where('kind', '=', 'email')
    .where('confirmed_at', 'is', null)
    .where('confirm_expires_at', '<', nowIso)
    .execute();

/** Stops a webhook (a day of failures, or a 410); false when it was already stopped. */
export async function disableSubscription(db: Executor, id: string, reason: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('status_subscriptions')
    .set({ disabled_at: at, disabled_reason: reason, updated_at: at })
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * The next `limit` subscribers after `afterId` (in id order) who were already subscribed when
 * the event happened: confirmed email addresses and webhooks not disabled. The fan-out walks
 * them in batches, so a subscriber confirmed meanwhile is neither skipped half-way nor told
 * of what happened before they subscribed.
 */
export const audienceAfter = (db: Executor, afterId: string, limit: number, untilIso: string) =>
  db
    .selectFrom('status_subscriptions')
    .select(['id', 'kind', 'email', 'component_ids'])
    .where('id', '>', afterId)
    .where((eb) =>
      eb.or([
        eb.and([eb('kind', '=', 'email'), eb('confirmed_at', 'is not', null), eb('confirmed_at', '<=', untilIso)]),
        eb.and([eb('kind', '=', 'webhook'), eb('disabled_at', 'is', null), eb('created_at', '<=', untilIso)]),
      ]),
    )
    .orderBy('id')
    .limit(limit)
    .execute();

/** Which of these component ids belong to a public service. */
export const publicComponentIds = async (db: Executor, ids: readonly string[]): Promise<string[]> =>
  ids.length === 0
    ? []
    : (
        await db
          .selectFrom('status_components as c')
          .innerJoin('status_services as s', 's.id', 'c.service_id')
          .select('c.id')
          .where('c.id', 'in', [...ids])
          .where('s.is_public', '=', 1)
          .execute()
      ).map((r) => r.id);

/** Slugs of components by id, for the operator's list. */
export const componentSlugs = (db: Executor) => db.selectFrom('status_components').select(['id', 'slug']).execute();
