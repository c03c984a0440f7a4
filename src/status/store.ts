import type { Executor } from '../db/tx.js';
import type {
  StatusComponentsTable,
  StatusIncidentsTable,
  StatusIncidentUpdatesTable,
  StatusMaintenanceTable,
  StatusServicesTable,
  StatusSnapshotsTable,
} from './tables.js';

export type ServiceRow = StatusServicesTable;
export type ComponentRow = StatusComponentsTable;
export type IncidentRow = StatusIncidentsTable;
export type UpdateRow = StatusIncidentUpdatesTable;
export type MaintenanceRow = StatusMaintenanceTable;
export type SnapshotRow = StatusSnapshotsTable;

export const insertService = (db: Executor, row: ServiceRow) => db.insertInto('status_services').values(row).execute();
export const serviceBySlug = (db: Executor, slug: string) =>
  db.selectFrom('status_services').selectAll().where('slug', '=', slug).executeTakeFirst();
export const serviceById = (db: Executor, id: string) =>
  db.selectFrom('status_services').selectAll().where('id', '=', id).executeTakeFirst();
export const updateService = (db: Executor, id: string, patch: Partial<ServiceRow>) =>
  db.updateTable('status_services').set(patch).where('id', '=', id).execute();
export const allServices = (db: Executor) =>
  db.selectFrom('status_services').selectAll().orderBy('sort_order').orderBy('name').execute();

export const insertComponent = (db: Executor, row: ComponentRow) =>
  db.insertInto('status_components').values(row).execute();
export const componentBySlug = (db: Executor, slug: string) =>
  db.selectFrom('status_components').selectAll().where('slug', '=', slug).executeTakeFirst();
export const updateComponent = (db: Executor, id: string, patch: Partial<ComponentRow>) =>
  db.updateTable('status_components').set(patch).where('id', '=', id).execute();
export const allComponents = (db: Executor) =>
  db.selectFrom('status_components').selectAll().orderBy('sort_order').orderBy('name').execute();

export const insertHistory = (
  db: Executor,
  row: { id: string; component_id: string; status: string; changed_at: string },
) => db.insertInto('status_component_history').values(row).execute();
export const latestHistory = (db: Executor, componentId: string) =>
  db
    .selectFrom('status_component_history')
    .select(['id', 'changed_at'])
    .where('component_id', '=', componentId)
    .orderBy('changed_at', 'desc')
    .limit(1)
    .executeTakeFirst();
export const setHistoryStatus = (db: Executor, id: string, status: string) =>
  db.updateTable('status_component_history').set({ status }).where('id', '=', id).execute();
export const allHistory = (db: Executor, since: string) =>
  db
    .selectFrom('status_component_history')
    .select(['component_id', 'status', 'changed_at'])
    .where('changed_at', '>=', since)
    .orderBy('component_id')
    .orderBy('changed_at')
    .orderBy('id')
    .execute();
/** The last change of each component before `before` (what held when the window opened). */
export const historyBefore = (db: Executor, before: string) =>
  db
    .selectFrom('status_component_history as h')
    .select(['h.component_id', 'h.status', 'h.changed_at'])
    .where('h.changed_at', '<', before)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('status_component_history as later')
            .select('later.id')
            .whereRef('later.component_id', '=', 'h.component_id')
            .where('later.changed_at', '<', before)
            .whereRef('later.changed_at', '>', 'h.changed_at'),
        ),
      ),
    )
    .execute();

export const insertIncident = (db: Executor, row: IncidentRow) =>
  db.insertInto('status_incidents').values(row).execute();
export const incidentById = (db: Executor, id: string) =>
  db.selectFrom('status_incidents').selectAll().where('id', '=', id).executeTakeFirst();
export const incidentBySlug = (db: Executor, slug: string) =>
  db.selectFrom('status_incidents').selectAll().where('slug', '=', slug).executeTakeFirst();
export const updateIncident = (db: Executor, id: string, patch: Partial<IncidentRow>) =>
  db.updateTable('status_incidents').set(patch).where('id', '=', id).execute();
export const allIncidents = (db: Executor) =>
  db.selectFrom('status_incidents').selectAll().orderBy('started_at', 'desc').orderBy('created_at', 'desc').execute();
export const insertUpdate = (db: Executor, row: UpdateRow) =>
  db.insertInto('status_incident_updates').values(row).execute();
export const allUpdates = (db: Executor) =>
  db.selectFrom('status_incident_updates').selectAll().orderBy('created_at').orderBy('id').execute();
export const linkIncidentService = (db: Executor, incidentId: string, serviceId: string) =>
  db
    .insertInto('status_incident_services')
    .values({ incident_id: incidentId, service_id: serviceId })
    .onConflict((oc) => oc.doNothing())
    .execute();
export const linkIncidentComponent = (db: Executor, incidentId: string, componentId: string) =>
  db
    .insertInto('status_incident_components')
    .values({ incident_id: incidentId, component_id: componentId })
    .onConflict((oc) => oc.doNothing())
    .execute();
export const updatesOfIncident = (db: Executor, incidentId: string) =>
  db
    .selectFrom('status_incident_updates')
    .selectAll()
    .where('incident_id', '=', incidentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
export const serviceSlugsOfIncident = (db: Executor, incidentId: string) =>
  db
    .selectFrom('status_incident_services as l')
    .innerJoin('status_services as s', 's.id', 'l.service_id')
    .select('s.slug')
    .where('l.incident_id', '=', incidentId)
    .execute();
export const componentSlugsOfIncident = (db: Executor, incidentId: string) =>
  db
    .selectFrom('status_incident_components as l')
    .innerJoin('status_components as c', 'c.id', 'l.component_id')
    .select('c.slug')
    .where('l.incident_id', '=', incidentId)
    .execute();
export const allIncidentServices = (db: Executor) => db.selectFrom('status_incident_services').selectAll().execute();
export const allIncidentComponents = (db: Executor) =>
  db.selectFrom('status_incident_components').selectAll().execute();

export const insertMaintenance = (db: Executor, row: MaintenanceRow) =>
  db.insertInto('status_maintenance').values(row).execute();
export const maintenanceById = (db: Executor, id: string) =>
  db.selectFrom('status_maintenance').selectAll().where('id', '=', id).executeTakeFirst();
export const maintenanceBySlug = (db: Executor, slug: string) =>
  db.selectFrom('status_maintenance').selectAll().where('slug', '=', slug).executeTakeFirst();
export const updateMaintenance = (db: Executor, id: string, patch: Partial<MaintenanceRow>) =>
  db.updateTable('status_maintenance').set(patch).where('id', '=', id).execute();
/** Moves a window to `to` only if it is still in `from`: a manual move made meanwhile wins. True when it moved. */
export async function moveMaintenance(
  db: Executor,
  id: string,
  from: string,
  to: string,
  at: string,
): Promise<boolean> {
  const res = await db
    .updateTable('status_maintenance')
    .set({ status: to, updated_at: at })
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
export const allMaintenance = (db: Executor) =>
  db.selectFrom('status_maintenance').selectAll().orderBy('starts_at').orderBy('created_at').execute();
export const openMaintenance = (db: Executor) =>
  db
    .selectFrom('status_maintenance')
    .selectAll()
    .where('status', 'in', ['scheduled', 'in_progress'])
    .orderBy('starts_at')
    .execute();

export const upsertSnapshot = (db: Executor, row: SnapshotRow) =>
  db
    .insertInto('status_snapshots')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['snapshot_date', 'scope_type', 'scope_key'])
        .doUpdateSet({ payload: row.payload, computed_at: row.computed_at }),
    )
    .execute();
export const snapshotOf = (db: Executor, date: string, scopeType: string, scopeKey: string) =>
  db
    .selectFrom('status_snapshots')
    .selectAll()
    .where('snapshot_date', '=', date)
    .where('scope_type', '=', scopeType)
    .where('scope_key', '=', scopeKey)
    .executeTakeFirst();
/** When the latest snapshot was written: a change of the data the status answers show. */
export const latestSnapshotAt = async (db: Executor): Promise<string | null> => {
  const row = await db
    .selectFrom('status_snapshots')
    .select('computed_at')
    .orderBy('computed_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.computed_at ?? null;
};
export const upsertUptimeSummary = (db: Executor, window: string, payload: string, computedAt: string) =>
  db
    .insertInto('status_uptime_summaries')
    .values({ window, payload, computed_at: computedAt })
    .onConflict((oc) => oc.column('window').doUpdateSet({ payload, computed_at: computedAt }))
    .execute();
