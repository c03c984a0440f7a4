import type { Executor } from '../db/tx.js';
import * as deliveries from './delivery-store.js';
import * as store from './subscription-store.js';
import type { SubscriptionRow } from './subscription-store.js';

/** A subscriber as the operator sees it (`gantry status subscribers list`); never the webhook's secret. */
export interface SubscriberView {
  id: string;
  kind: 'email' | 'webhook';
  /** The email address or the webhook's URL. */
  address: string;
  /** pending (email not confirmed yet), active, or disabled (a webhook that kept failing). */
  state: 'pending' | 'active' | 'disabled';
  /** Slugs of the components it follows; null: everything. */
  components: string[] | null;
  createdAt: string;
  confirmedAt: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
  /** A webhook's deliveries by outcome; null for an address. */
  deliveries: { delivered: number; pending: number; failed: number } | null;
  lastDelivery: {
    status: string;
    attempts: number;
    lastStatusCode: number | null;
    lastError: string | null;
    createdAt: string;
  } | null;
}

const stateOf = (row: SubscriptionRow): SubscriberView['state'] =>
  row.disabled_at ? 'disabled' : row.confirmed_at ? 'active' : 'pending';

export async function listSubscribers(db: Executor): Promise<SubscriberView[]> {
  const [rows, slugs, counts, latest] = await Promise.all([
    store.allSubscriptions(db),
    store.componentSlugs(db),
    deliveries.deliveryCounts(db),
    deliveries.latestDeliveries(db),
  ]);
  const slugOf = new Map(slugs.map((c) => [c.id, c.slug]));
  const latestOf = new Map(latest.map((d) => [d.subscription_id, d]));
  return rows.map((row) => {
    const ids = row.component_ids ? (JSON.parse(row.component_ids) as string[]) : null;
    const count = (status: string) =>
      Number(counts.find((c) => c.subscription_id === row.id && c.status === status)?.n ?? 0);
    const last = latestOf.get(row.id);
    return {
      id: row.id,
      kind: row.kind as SubscriberView['kind'],
      address: row.email ?? row.webhook_url ?? '',
      state: stateOf(row),
      components: ids === null ? null : ids.map((id) => slugOf.get(id) ?? id),
      createdAt: row.created_at,
      confirmedAt: row.confirmed_at,
      disabledAt: row.disabled_at,
      disabledReason: row.disabled_reason,
      deliveries:
        row.kind === 'webhook'
          ? { delivered: count('delivered'), pending: count('pending'), failed: count('failed') }
          : null,
      lastDelivery: last
        ? {
            status: last.status,
            attempts: last.attempts,
            lastStatusCode: last.last_status_code,
            lastError: last.last_error,
            createdAt: last.created_at,
          }
        : null,
    };
  });
}
