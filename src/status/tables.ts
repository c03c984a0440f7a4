export interface StatusServicesTable {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  sort_order: number;
  is_public: number; // 0/1; only public services appear anywhere in the status service
  created_at: string;
  updated_at: string;
}

export interface StatusComponentsTable {
  id: string;
  service_id: string;
  slug: string;
  name: string;
  current_status: string; // operational, degraded_performance, partial_outage, major_outage, maintenance
  sort_order: number;
  created_at: string;
  updated_at: string;
}

interface StatusComponentHistoryTable {
  id: string;
  component_id: string;
  status: string;
  changed_at: string;
}

export interface StatusIncidentsTable {
  id: string;
  slug: string;
  title: string;
  status: string; // investigating, identified, monitoring, resolved, postmortem_ready
  impact: string; // minor, partial, major
  severity: string | null;
  description: string | null;
  started_at: string;
  resolved_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface StatusIncidentUpdatesTable {
  id: string;
  incident_id: string;
  status: string;
  message: string;
  author_name: string | null;
  created_at: string;
}

interface StatusIncidentServicesTable {
  incident_id: string;
  service_id: string;
}

interface StatusIncidentComponentsTable {
  incident_id: string;
  component_id: string;
}

export interface StatusMaintenanceTable {
  id: string;
  slug: string;
  title: string;
  description: string | null;
  status: string; // scheduled, in_progress, completed, cancelled
  starts_at: string;
  ends_at: string;
  service_id: string;
  created_at: string;
  updated_at: string;
}

export interface StatusSnapshotsTable {
  snapshot_date: string;
  scope_type: string;
  scope_key: string;
  payload: string; // JSON
  computed_at: string;
}

interface StatusUptimeSummariesTable {
  window: string;
  payload: string; // JSON
  computed_at: string;
}

export interface StatusTables {
  status_services: StatusServicesTable;
  status_components: StatusComponentsTable;
  status_component_history: StatusComponentHistoryTable;
  status_incidents: StatusIncidentsTable;
  status_incident_updates: StatusIncidentUpdatesTable;
  status_incident_services: StatusIncidentServicesTable;
  status_incident_components: StatusIncidentComponentsTable;
  status_maintenance: StatusMaintenanceTable;
  status_snapshots: StatusSnapshotsTable;
  status_uptime_summaries: StatusUptimeSummariesTable;
}
