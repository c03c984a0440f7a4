import type { Executor } from '../tx.js';

/**
 * Claims one tick of a cluster-scoped job: inserts the job's row or moves its tick forward,
 * only if no process has claimed this tick (or a later one) yet. One statement, the same on
 * both engines, so of several nodes firing the same tick exactly one gets true
 * (docs/scaling.md, Periodic jobs).
 */
export async function claimJobTick(db: Executor, name: string, tick: string, nowIso: string): Promise<boolean> {
  const result = await db
    .insertInto('job_ticks')
    .values({ name, tick, claimed_at: nowIso })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet((eb) => ({ tick: eb.ref('excluded.tick'), claimed_at: eb.ref('excluded.claimed_at') }))
        .where('job_ticks.tick', '<', tick),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
