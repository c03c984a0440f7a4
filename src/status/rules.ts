/**
 * The fixed rules of the status service (docs/status.md): status values of docs/interface.md (Resources), how
 * statuses roll up (worst of), and the indicator and headline that follow from a status.
 */

export const COMPONENT_STATUSES = [
  'operational',
  'degraded_performance',
  'partial_outage',
  'major_outage',
  'maintenance',
] as const;
export type ComponentStatus = (typeof COMPONENT_STATUSES)[number];

export const INCIDENT_STATUSES = ['investigating', 'identified', 'monitoring', 'resolved', 'postmortem_ready'] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];

export const INCIDENT_IMPACTS = ['minor', 'partial', 'major'] as const;
export type IncidentImpact = (typeof INCIDENT_IMPACTS)[number];

export const MAINTENANCE_STATUSES = ['scheduled', 'in_progress', 'completed', 'cancelled'] as const;
export type MaintenanceStatus = (typeof MAINTENANCE_STATUSES)[number];

export const UPTIME_WINDOWS = ['24h', '7d', '30d', '90d', '1y'] as const;
export type UptimeWindow = (typeof UPTIME_WINDOWS)[number];

const DAY = 86_400_000;
export const WINDOW_MS: Record<UptimeWindow, number> = {
  '24h': DAY,
  '7d': 7 * DAY,
  '30d': 30 * DAY,
  '90d': 90 * DAY,
  '1y': 365 * DAY,
};

/**
 * Severity order for "worst of". Maintenance ranks above operational and below every
 * degradation: planned work is worth showing, but an outage during the work is worse news.
 */
const RANK: Record<ComponentStatus, number> = {
  operational: 0,
  maintenance: 1,
  degraded_performance: 2,
  partial_outage: 3,
  major_outage: 4,
};

export function worstOf(statuses: Iterable<ComponentStatus>): ComponentStatus {
  let worst: ComponentStatus = 'operational';
  for (const s of statuses) if (RANK[s] > RANK[worst]) worst = s;
  return worst;
}

/** Statuspage's component indicators: none, minor, major, critical, maintenance. */
const INDICATOR: Record<ComponentStatus, string> = {
  operational: 'none',
  degraded_performance: 'minor',
  partial_outage: 'major',
  major_outage: 'critical',
  maintenance: 'maintenance',
};
export const indicatorOf = (status: ComponentStatus): string => INDICATOR[status];

/** The headline of the platform, a fixed function of its status (Statuspage's wording). */
const HEADLINE: Record<ComponentStatus, string> = {
  operational: 'All Systems Operational',
  degraded_performance: 'Partially Degraded Service',
  partial_outage: 'Partial System Outage',
  major_outage: 'Major System Outage',
  maintenance: 'Service Under Maintenance',
};
export const headlineOf = (status: ComponentStatus): string => HEADLINE[status];

/** What an active incident does to the status of what it affects. */
const IMPACT_STATUS: Record<IncidentImpact, ComponentStatus> = {
  minor: 'degraded_performance',
  partial: 'partial_outage',
  major: 'major_outage',
};
export const impactStatus = (impact: IncidentImpact): ComponentStatus => IMPACT_STATUS[impact];

/** An incident counts toward current status until it is resolved. */
export const isActiveIncident = (status: string): boolean =>
  status === 'investigating' || status === 'identified' || status === 'monitoring';

/**
 * Incident moves (the interface fixes none): while open, any open status may follow any other;
 * resolving stamps resolved_at; a resolved incident may be reopened or marked
 * postmortem_ready; postmortem_ready is final.
 */
export function incidentMoveAllowed(from: IncidentStatus, to: IncidentStatus): boolean {
  if (from === 'postmortem_ready') return false;
  if (to === 'postmortem_ready') return from === 'resolved';
  return true;
}

/**
 * Maintenance moves: scheduled -> in_progress -> completed, and scheduled or in_progress ->
 * cancelled; completed and cancelled are final. The jobs make the timed moves themselves.
 */
const MAINTENANCE_MOVES: Record<MaintenanceStatus, readonly MaintenanceStatus[]> = {
  scheduled: ['in_progress', 'completed', 'cancelled'],
  in_progress: ['completed', 'cancelled'],
  completed: [],
  cancelled: [],
};
export const maintenanceMoveAllowed = (from: MaintenanceStatus, to: MaintenanceStatus): boolean =>
  MAINTENANCE_MOVES[from].includes(to);

/** Where a maintenance window stands at `now` by its times alone (from scheduled or in_progress). */
export function maintenanceStatusAt(
  current: MaintenanceStatus,
  startsAt: string,
  endsAt: string,
  now: Date,
): MaintenanceStatus {
  if (current !== 'scheduled' && current !== 'in_progress') return current;
  const t = now.getTime();
  if (t >= Date.parse(endsAt)) return 'completed';
  if (t >= Date.parse(startsAt)) return 'in_progress';
  return current;
}
