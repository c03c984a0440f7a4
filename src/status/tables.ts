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

/** An email or webhook subscriber (docs/status.md, Subscriptions). */
export interface StatusSubscriptionsTable {
  id: string;
  kind: string; // email, webhook
  email: string | null;
  webhook_url: string | null;
  webhook_host: string | null;
  secret_sealed: string | null;
  component_ids: string | null; // JSON array; null: everything
  confirm_token_hash: string | null;
  confirm_expires_at: string | null;
  confirmed_at: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** Something subscribers are told, written in the publishing transaction; fanned out by a job. */
export interface StatusEventsTable {
  id: string;
  type: string; // incident.created, incident.updated, incident.resolved, maintenance.started, maintenance.completed
  subject_id: string;
  targets: string | null; // JSON array of public component ids; null: platform-wide
  payload: string; // the webhook body (JSON)
  created_at: string;
  fanout_after: string; // the last subscription id the fan-out has handled
  fanned_out_at: string | null;
}

/** One event to one webhook: its attempts and outcome. */
export interface StatusWebhookDeliveriesTable {
  id: string;
  subscription_id: string;
  event_id: string;
  status: string; // pending, delivered, failed
  attempts: number;
  next_attempt_at: string;
  claimed_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
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
  status_subscriptions: StatusSubscriptionsTable;
  status_events: StatusEventsTable;
  status_webhook_deliveries: StatusWebhookDeliveriesTable;
}
