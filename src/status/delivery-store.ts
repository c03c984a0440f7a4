import type { Executor } from '../db/tx.js';
import type { StatusWebhookDeliveriesTable } from './tables.js';

/** Every statement of status_webhook_deliveries (docs/status.md, Webhooks). */

export type DeliveryRow = StatusWebhookDeliveriesTable;

export const insertDeliveries = (db: Executor, rows: DeliveryRow[]) =>
  db.insertInto('status_webhook_deliveries').values(rows).execute();

/** Pending deliveries due at `nowIso` and not leased by another process, with what sending them needs. */
export const dueDeliveries = (db: Executor, nowIso: string, limit: number) =>
  db
    .selectFrom('status_webhook_deliveries as d')
    .innerJoin('status_subscriptions as s', 's.id', 'd.subscription_id')
    .innerJoin('status_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.subscription_id',
      'd.attempts',
      'd.created_at',
      'e.type',
      'e.payload',
      's.webhook_url',
      's.secret_sealed',
      's.disabled_at',
    ])
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', nowIso)
    .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<', nowIso)]))
    .orderBy('d.next_attempt_at')
    .orderBy('e.created_at')
    .orderBy('d.id')
    .limit(limit)
    .execute();

/**
 * Claims a due delivery for one attempt under a lease (the attempt counted first): of several
 * nodes, one sends it, and none takes it over while that send may still be in flight.
 */
export async function claimDelivery(db: Executor, id: string, nowIso: string, leaseUntilIso: string): Promise<boolean> {
  const res = await db
    .updateTable('status_webhook_deliveries')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), claimed_until: leaseUntilIso }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', nowIso)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', nowIso)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** The end of an attempt: delivered, failed for good, or pending again from `nextAttemptAt`. */
export const recordAttempt = (
  db: Executor,
  id: string,
  outcome: {
    status: 'pending' | 'delivered' | 'failed';
    statusCode: number | null;
    error: string | null;
    at: string;
    nextAttemptAt?: string;
  },
) =>
  db
    .updateTable('status_webhook_deliveries')
    .set({
      status: outcome.status,
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      claimed_until: null,
      ...(outcome.nextAttemptAt ? { next_attempt_at: outcome.nextAttemptAt } : {}),
      ...(outcome.status === 'pending' ? {} : { finished_at: outcome.at }),
    })
    .where('id', '=', id)
    .execute();

/** Gives up every pending delivery of a subscription that was disabled. */
export const failPendingOf = (db: Executor, subscriptionId: string, reason: string, at: string) =>
  db
    .updateTable('status_webhook_deliveries')
    .set({ status: 'failed', last_error: reason, finished_at: at, claimed_until: null })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .execute();

/** Each webhook's deliveries by outcome, for the operator's list. */
export const deliveryCounts = (db: Executor) =>
  db
    .selectFrom('status_webhook_deliveries')
    .select((eb) => ['subscription_id', 'status', eb.fn.countAll<number>().as('n')])
    .groupBy(['subscription_id', 'status'])
    .execute();

/** The newest delivery of each webhook subscription. */
export const latestDeliveries = (db: Executor) =>
  db
    .selectFrom('status_webhook_deliveries as d')
    .selectAll('d')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('status_webhook_deliveries as later')
            .select('later.id')
            .whereRef('later.subscription_id', '=', 'd.subscription_id')
            .where((eb) =>
              eb.or([
                eb('later.created_at', '>', eb.ref('d.created_at')),
                eb.and([eb('later.created_at', '=', eb.ref('d.created_at')), eb('later.id', '>', eb.ref('d.id'))]),
              ]),
            ),
        ),
      ),
    )
    .execute();
