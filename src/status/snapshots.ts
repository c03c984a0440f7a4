import * as store from './store.js';
import type { StatusContext } from './context.js';
import { buildModel, loadRows } from './model.js';
import { presentUptime, snapshotPayload } from './presenters.js';
import { UPTIME_WINDOWS } from './rules.js';

/**
 * The daily snapshot (run at midnight UTC): the day that just ended, as the platform stood at
 * its end, with each service's uptime over that day; and the uptime summaries of every window.
 * Running it again for the same day replaces the row.
 */
export async function writeDailySnapshot(ctx: StatusContext, now: Date): Promise<store.SnapshotRow> {
  const snapshotDate = new Date(now.getTime() - 1).toISOString().slice(0, 10);
  const model = buildModel(await loadRows(ctx.kernel.db, now), now);
  const computedAt = now.toISOString();
  const row: store.SnapshotRow = {
    snapshot_date: snapshotDate,
    scope_type: 'platform',
    scope_key: 'all',
    payload: JSON.stringify(snapshotPayload(model)),
    computed_at: computedAt,
  };
  await ctx.write(`snapshot:${snapshotDate}`, async (trx) => {
    await store.upsertSnapshot(trx, row);
    for (const window of UPTIME_WINDOWS)
      await store.upsertUptimeSummary(trx, window, JSON.stringify(presentUptime(model, window)), computedAt);
  });
  return row;
}
