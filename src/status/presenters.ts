import type { MaintenanceRow, UpdateRow } from './store.js';
import { headlineOf, indicatorOf, UPTIME_WINDOWS, type UptimeWindow } from './rules.js';
import { toMinutes, toPercent } from './uptime.js';
import type { ComponentView, IncidentView, ServiceView, StatusModel } from './model.js';

/** The shapes of docs/interface.md (Resources, status service), snake_case as listed there. */

export const presentService = (s: ServiceView) => ({
  id: s.row.id,
  slug: s.row.slug,
  name: s.row.name,
  description: s.row.description,
  current_status: s.status,
  indicator: indicatorOf(s.status),
  sort_order: s.row.sort_order,
  is_public: true,
  created_at: s.row.created_at,
  updated_at: s.row.updated_at,
});

export const presentComponent = (c: ComponentView) => ({
  id: c.row.id,
  slug: c.row.slug,
  name: c.row.name,
  current_status: c.status,
  indicator: indicatorOf(c.status),
  service_id: c.row.service_id,
});

const presentUpdate = (u: UpdateRow) => ({
  id: u.id,
  status: u.status,
  message: u.message,
  author_name: u.author_name,
  created_at: u.created_at,
});

/** An incident with its timeline, newest update first. */
export const presentIncident = (i: IncidentView) => ({
  id: i.row.id,
  slug: i.row.slug,
  title: i.row.title,
  status: i.row.status,
  impact: i.row.impact,
  severity: i.row.severity,
  description: i.row.description,
  started_at: i.row.started_at,
  resolved_at: i.row.resolved_at,
  updates: [...i.updates].reverse().map(presentUpdate),
});

export const presentMaintenance = (m: MaintenanceRow) => ({
  id: m.id,
  slug: m.slug,
  title: m.title,
  status: m.status,
  starts_at: m.starts_at,
  ends_at: m.ends_at,
  service_id: m.service_id,
});

export const presentSummary = (model: StatusModel) => ({
  headline: headlineOf(model.status),
  status: model.status,
  indicator: indicatorOf(model.status),
  services: model.services.map(presentService),
  incidents: model.incidents.filter((i) => i.active).map(presentIncident),
  maintenance: model.maintenance.map(presentMaintenance),
  updated_at: model.updatedAt,
});

/** Service detail: its incidents of the last 90 days (and any still open), newest first. */
export function presentServiceDetail(s: ServiceView, model: StatusModel) {
  const since = model.at.getTime() - 90 * 86_400_000;
  return {
    id: s.row.id,
    slug: s.row.slug,
    name: s.row.name,
    description: s.row.description,
    current_status: s.status,
    indicator: indicatorOf(s.status),
    components: s.components.map((c) => ({
      id: c.row.id,
      slug: c.row.slug,
      name: c.row.name,
      current_status: c.status,
    })),
    incidents: s.incidents
      .filter((i) => i.active || Date.parse(i.row.resolved_at ?? i.row.started_at) >= since)
      .map(presentIncident),
    maintenance: s.maintenance.map(presentMaintenance),
    uptime: Object.fromEntries(UPTIME_WINDOWS.map((w) => [w, toPercent(s.uptime[w].ratio)])) as Record<
      UptimeWindow,
      number
    >,
  };
}

/** Uptime summary (docs/interface.md, Resources: scope_type, scope_key, window, uptime_percent, downtime_minutes, incident_count, computed_at). */
export function presentUptime(model: StatusModel, window: UptimeWindow) {
  return {
    scope_type: 'platform',
    scope_key: 'all',
    window,
    uptime_percent: toPercent(model.platformUptime[window].ratio),
    downtime_minutes: toMinutes(model.platformUptime[window].downtimeMs),
    incident_count: model.platformIncidentCount[window],
    computed_at: model.at.toISOString(),
  };
}

/** The daily snapshot's payload (docs/interface.md, Resources: headline, status, services). */
export const snapshotPayload = (model: StatusModel) => ({
  headline: headlineOf(model.status),
  status: model.status,
  services: model.services.map((s) => ({
    ...presentService(s),
    uptime_24h: toPercent(s.uptime['24h'].ratio),
    downtime_minutes_24h: toMinutes(s.uptime['24h'].downtimeMs),
    incident_count_24h: s.incidentCount['24h'],
  })),
});
