import type { Executor } from '../db/tx.js';
import * as store from './store.js';
import type { ComponentRow, IncidentRow, MaintenanceRow, ServiceRow, UpdateRow } from './store.js';
import {
  impactStatus,
  isActiveIncident,
  UPTIME_WINDOWS,
  WINDOW_MS,
  worstOf,
  type ComponentStatus,
  type IncidentImpact,
  type UptimeWindow,
} from './rules.js';
import { componentUptime, worstFigure, type HistoryPoint, type UptimeFigure } from './uptime.js';

const DAY = 86_400_000;
const BAR_DAYS = 90;

/** Everything the status service shows, read in one go. */
export interface StatusRows {
  services: ServiceRow[];
  components: ComponentRow[];
  history: Map<string, HistoryPoint[]>;
  incidents: IncidentRow[];
  updates: UpdateRow[];
  incidentServices: Array<{ incident_id: string; service_id: string }>;
  incidentComponents: Array<{ incident_id: string; component_id: string }>;
  maintenance: MaintenanceRow[];
  /** When the latest daily snapshot was written (null before the first). */
  latestSnapshotAt: string | null;
}

export async function loadRows(db: Executor, now: Date): Promise<StatusRows> {
  const since = new Date(now.getTime() - WINDOW_MS['1y'] - DAY).toISOString();
  const [
    services,
    components,
    before,
    recent,
    incidents,
    updates,
    incidentServices,
    incidentComponents,
    maintenance,
    latestSnapshotAt,
  ] = await Promise.all([
    store.allServices(db),
    store.allComponents(db),
    store.historyBefore(db, since),
    store.allHistory(db, since),
    store.allIncidents(db),
    store.allUpdates(db),
    store.allIncidentServices(db),
    store.allIncidentComponents(db),
    store.allMaintenance(db),
    store.latestSnapshotAt(db),
  ]);
  const history = new Map<string, HistoryPoint[]>();
  for (const row of [...before, ...recent]) {
    const list = history.get(row.component_id) ?? [];
    list.push({ status: row.status as ComponentStatus, at: Date.parse(row.changed_at) });
    history.set(row.component_id, list);
  }
  for (const list of history.values()) list.sort((a, b) => a.at - b.at);
  return {
    services,
    components,
    history,
    incidents,
    updates,
    incidentServices,
    incidentComponents,
    maintenance,
    latestSnapshotAt,
  };
}

/**
 * The latest change of any status data, in ms (0 when there is none): every write stamps the
 * rows it touches, private ones included (making a service private is a change too). A
 * maintenance window's timed start or end is such a write (its job stamps updated_at).
 */
export function latestChangeMs(rows: StatusRows): number {
  let latest = rows.latestSnapshotAt === null ? 0 : Date.parse(rows.latestSnapshotAt);
  const stamp = (iso: string) => {
    const ms = Date.parse(iso);
    if (ms > latest) latest = ms;
  };
  for (const r of rows.services) stamp(r.updated_at);
  for (const r of rows.components) stamp(r.updated_at);
  for (const r of rows.incidents) stamp(r.updated_at);
  for (const r of rows.updates) stamp(r.created_at);
  for (const r of rows.maintenance) stamp(r.updated_at);
  for (const points of rows.history.values()) for (const p of points) if (p.at > latest) latest = p.at;
  return latest;
}

export interface DayBar {
  date: string;
  /** Percent, or null before the service had any component. */
  uptime: number | null;
  /** The service's incidents open at some time that day. */
  incidents: IncidentView[];
}

export interface ComponentView {
  row: ComponentRow;
  status: ComponentStatus;
  uptime: Record<UptimeWindow, UptimeFigure>;
}

export interface IncidentView {
  row: IncidentRow;
  /** Oldest first. */
  updates: UpdateRow[];
  /** Public services it affects, named directly or through one of their components. */
  serviceIds: Set<string>;
  /** Public components it names. */
  componentIds: Set<string>;
  active: boolean;
}

export interface ServiceView {
  row: ServiceRow;
  status: ComponentStatus;
  components: ComponentView[];
  incidents: IncidentView[];
  maintenance: MaintenanceRow[];
  uptime: Record<UptimeWindow, UptimeFigure>;
  incidentCount: Record<UptimeWindow, number>;
  days: DayBar[];
}

export interface StatusModel {
  at: Date;
  status: ComponentStatus;
  services: ServiceView[];
  servicesBySlug: Map<string, ServiceView>;
  /** Public incidents, newest first. */
  incidents: IncidentView[];
  incidentsById: Map<string, IncidentView>;
  /** Upcoming and active windows of public services, soonest first. */
  maintenance: MaintenanceRow[];
  platformUptime: Record<UptimeWindow, UptimeFigure>;
  platformIncidentCount: Record<UptimeWindow, number>;
  /** The latest change of the data shown (not the time of computation). */
  updatedAt: string;
}

const overlaps = (incident: IncidentRow, start: number, end: number): boolean =>
  Date.parse(incident.started_at) < end && (incident.resolved_at === null || Date.parse(incident.resolved_at) > start);

const byWindow = <T>(fn: (w: UptimeWindow) => T): Record<UptimeWindow, T> =>
  Object.fromEntries(UPTIME_WINDOWS.map((w) => [w, fn(w)])) as Record<UptimeWindow, T>;

/**
 * The whole public view at `now`: rollups (worst of), uptime figures and the 90-day bars. A pure
 * function of its arguments: it never reads the clock.
 */
export function buildModel(rows: StatusRows, now: Date): StatusModel {
  const t = now.getTime();
  const publicServices = rows.services.filter((s) => s.is_public === 1);
  const publicIds = new Set(publicServices.map((s) => s.id));
  const serviceOfComponent = new Map(rows.components.map((c) => [c.id, c.service_id]));

  const updatesOf = new Map<string, UpdateRow[]>();
  for (const u of rows.updates) {
    const list = updatesOf.get(u.incident_id);
    if (list) list.push(u);
    else updatesOf.set(u.incident_id, [u]);
  }
  const affected = new Map<string, Set<string>>();
  const touch = (incidentId: string, serviceId: string | undefined) => {
    if (!serviceId) return;
    const set = affected.get(incidentId) ?? new Set<string>();
    set.add(serviceId);
    affected.set(incidentId, set);
  };
  for (const link of rows.incidentServices) touch(link.incident_id, link.service_id);
  for (const link of rows.incidentComponents) touch(link.incident_id, serviceOfComponent.get(link.component_id));

  const namedComponents = new Map<string, Set<string>>();
  for (const link of rows.incidentComponents) {
    if (!publicIds.has(serviceOfComponent.get(link.component_id) ?? '')) continue;
    const set = namedComponents.get(link.incident_id) ?? new Set<string>();
    set.add(link.component_id);
    namedComponents.set(link.incident_id, set);
  }

  // Shown: incidents touching a public service, and platform-wide ones (touching no service).
  const incidents: IncidentView[] = [];
  for (const row of rows.incidents) {
    const serviceIds = affected.get(row.id) ?? new Set<string>();
    if (serviceIds.size > 0 && ![...serviceIds].some((id) => publicIds.has(id))) continue;
    incidents.push({
      row,
      updates: updatesOf.get(row.id) ?? [],
      serviceIds: new Set([...serviceIds].filter((id) => publicIds.has(id))),
      componentIds: namedComponents.get(row.id) ?? new Set<string>(),
      active: isActiveIncident(row.status),
    });
  }

  const uptimeOf = (c: ComponentRow, start: number, end: number) =>
    componentUptime(rows.history.get(c.id) ?? [], Date.parse(c.created_at), start, end);
  const firstDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - (BAR_DAYS - 1) * DAY;

  const services: ServiceView[] = publicServices.map((row) => {
    const components: ComponentView[] = rows.components
      .filter((c) => c.service_id === row.id)
      .map((c) => ({
        row: c,
        status: c.current_status as ComponentStatus,
        uptime: byWindow((w) => uptimeOf(c, t - WINDOW_MS[w], t)),
      }));
    const serviceIncidents = incidents.filter((i) => i.serviceIds.has(row.id));
    const maintenance = rows.maintenance.filter(
      (m) => m.service_id === row.id && (m.status === 'scheduled' || m.status === 'in_progress'),
    );
    const status = worstOf([
      ...components.map((c) => c.status),
      ...serviceIncidents.filter((i) => i.active).map((i) => impactStatus(i.row.impact as IncidentImpact)),
      ...(maintenance.some((m) => m.status === 'in_progress') ? (['maintenance'] as const) : []),
    ]);
    const days: DayBar[] = [];
    for (let d = 0; d < BAR_DAYS; d++) {
      const start = firstDay + d * DAY;
      const end = Math.min(start + DAY, t);
      const figure = worstFigure(components.map((c) => uptimeOf(c.row, start, end)));
      days.push({
        date: new Date(start).toISOString().slice(0, 10),
        uptime: figure.spanMs > 0 ? figure.ratio * 100 : null,
        incidents: serviceIncidents.filter((i) => overlaps(i.row, start, start + DAY)),
      });
    }
    return {
      row,
      status,
      components,
      incidents: serviceIncidents,
      maintenance,
      uptime: byWindow((w) => worstFigure(components.map((c) => c.uptime[w]))),
      incidentCount: byWindow((w) => serviceIncidents.filter((i) => overlaps(i.row, t - WINDOW_MS[w], t)).length),
      days,
    };
  });

  const platformWide = incidents
    .filter((i) => i.serviceIds.size === 0 && i.active)
    .map((i) => impactStatus(i.row.impact as IncidentImpact));
  const status = worstOf([...services.map((s) => s.status), ...platformWide]);
  const maintenance = rows.maintenance.filter(
    (m) => publicIds.has(m.service_id) && (m.status === 'scheduled' || m.status === 'in_progress'),
  );

  const stamps = [
    ...publicServices.map((s) => s.updated_at),
    ...rows.components.filter((c) => publicIds.has(c.service_id)).map((c) => c.updated_at),
    ...incidents.map((i) => i.row.updated_at),
    ...rows.maintenance.filter((m) => publicIds.has(m.service_id)).map((m) => m.updated_at),
  ];
  const updatedAt = stamps.length > 0 ? stamps.reduce((a, b) => (a > b ? a : b)) : new Date(0).toISOString();

  return {
    at: now,
    status,
    services,
    servicesBySlug: new Map(services.map((s) => [s.row.slug, s])),
    incidents,
    incidentsById: new Map(incidents.map((i) => [i.row.id, i])),
    maintenance,
    platformUptime: byWindow((w) => worstFigure(services.map((s) => s.uptime[w]))),
    platformIncidentCount: byWindow((w) => incidents.filter((i) => overlaps(i.row, t - WINDOW_MS[w], t)).length),
    updatedAt,
  };
}
