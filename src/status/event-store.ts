import type { Executor } from '../db/tx.js';
import type { StatusEventsTable } from './tables.js';

/** Every statement of status_events, and the reads that decide who an event concerns. */

export type EventRow = StatusEventsTable;

export const insertEvent = (db: Executor, row: EventRow) => db.insertInto('status_events').values(row).execute();

/** Events not fanned out yet, oldest first. */
export const pendingEvents = (db: Executor, limit: number) =>
  db
    .selectFrom('status_events')
    .selectAll()
    .where('fanned_out_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();

/**
 * Moves an event's fan-out cursor from `from` to `to`, only if it still stands at `from`: of two
 * nodes fanning out the same batch, one moves it, and the other's transaction (with its mails)
 * is rolled back. True for the winner.
 */
export async function advanceEvent(db: Executor, id: string, from: string, to: string): Promise<boolean> {
  const res = await db
    .updateTable('status_events')
    .set({ fanout_after: to })
    .where('id', '=', id)
    .where('fanout_after', '=', from)
    .where('fanned_out_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export const finishEvent = (db: Executor, id: string, at: string) =>
  db.updateTable('status_events').set({ fanned_out_at: at }).where('id', '=', id).execute();

/** Drops fanned-out events created before `beforeIso`, with their deliveries (cascade). */
export async function pruneEvents(db: Executor, beforeIso: string): Promise<number> {
  const res = await db
    .deleteFrom('status_events')
    .where('fanned_out_at', 'is not', null)
    .where('created_at', '<', beforeIso)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** The services an incident names, with whether each is public. */
export const servicesOfIncident = (db: Executor, incidentId: string) =>
  db
    .selectFrom('status_incident_services as l')
    .innerJoin('status_services as s', 's.id', 'l.service_id')
    .select(['s.id', 's.slug', 's.name', 's.is_public'])
    .where('l.incident_id', '=', incidentId)
    .execute();

/** The components an incident names, with their service and whether it is public. */
export const componentsOfIncident = (db: Executor, incidentId: string) =>
  db
    .selectFrom('status_incident_components as l')
    .innerJoin('status_components as c', 'c.id', 'l.component_id')
    .innerJoin('status_services as s', 's.id', 'c.service_id')
    .select([
      'c.id',
      'c.slug',
      'c.name',
      'c.service_id',
      's.slug as service_slug',
      's.name as service_name',
      's.is_public',
    ])
    .where('l.incident_id', '=', incidentId)
    .execute();

/** The component ids of these services. */
export const componentIdsOfServices = async (db: Executor, serviceIds: readonly string[]): Promise<string[]> =>
  serviceIds.length === 0
    ? []
    : (
        await db
          .selectFrom('status_components')
          .select('id')
          .where('service_id', 'in', [...serviceIds])
          .execute()
      ).map((r) => r.id);
