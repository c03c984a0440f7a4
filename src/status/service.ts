import type { Kernel } from '../kernel.js';
import * as store from './store.js';
import type { ComponentRow, IncidentRow, MaintenanceRow, ServiceRow } from './store.js';
import { StatusProjection } from './projection.js';
import { statusContext, type StatusContext } from './context.js';
import * as catalog from './catalog.js';
import type { ComponentInput, ServiceInput, ServicePatch } from './catalog.js';
import * as incidents from './incidents.js';
import type { IncidentDetail, IncidentInput, IncidentUpdateInput } from './incidents.js';
import * as maintenance from './maintenance.js';
import type { MaintenanceChange, MaintenanceInput } from './maintenance.js';
import * as snapshots from './snapshots.js';

export type { IncidentDetail } from './incidents.js';

/**
 * Publishing the platform's status (every entry point, CLI or job, goes through here). Each
 * write publishes on the `status` topic in its transaction, so this process's projection
 * rebuilds at once and other processes' within the change feed's poll.
 */
export class StatusService {
  readonly projection: StatusProjection;
  private readonly ctx: StatusContext;

  constructor(private readonly kernel: Kernel) {
    this.projection = new StatusProjection(kernel);
    this.ctx = statusContext(kernel);
  }

  createService(input: ServiceInput): Promise<ServiceRow> {
    return catalog.createService(this.ctx, input);
  }

  updateService(slug: string, patch: ServicePatch): Promise<ServiceRow> {
    return catalog.updateService(this.ctx, slug, patch);
  }

  listServices(): Promise<ServiceRow[]> {
    return store.allServices(this.kernel.db);
  }

  createComponent(input: ComponentInput): Promise<ComponentRow> {
    return catalog.createComponent(this.ctx, input);
  }

  /** Sets a component's status; every change is a timestamped history row (uptime is computed from them). */
  setComponentStatus(slug: string, status: string): Promise<ComponentRow> {
    return catalog.setComponentStatus(this.ctx, slug, status);
  }

  listComponents(): Promise<ComponentRow[]> {
    return store.allComponents(this.kernel.db);
  }

  createIncident(input: IncidentInput): Promise<IncidentDetail> {
    return incidents.createIncident(this.ctx, input);
  }

  /** Posts an update: the incident takes its status (and impact when given). */
  updateIncident(idOrSlug: string, input: IncidentUpdateInput): Promise<IncidentDetail> {
    return incidents.updateIncident(this.ctx, idOrSlug, input);
  }

  incident(idOrSlug: string): Promise<IncidentDetail> {
    return incidents.incidentDetail(this.kernel.db, idOrSlug);
  }

  listIncidents(): Promise<IncidentRow[]> {
    return store.allIncidents(this.kernel.db);
  }

  createMaintenance(input: MaintenanceInput): Promise<MaintenanceRow> {
    return maintenance.createMaintenance(this.ctx, input);
  }

  updateMaintenance(idOrSlug: string, input: MaintenanceChange): Promise<MaintenanceRow> {
    return maintenance.updateMaintenance(this.ctx, idOrSlug, input);
  }

  listMaintenance(): Promise<MaintenanceRow[]> {
    return store.allMaintenance(this.kernel.db);
  }

  /** The timed moves of maintenance windows (the job's body). */
  advanceMaintenance(now: Date): Promise<maintenance.MaintenanceMove[]> {
    return maintenance.advanceMaintenance(this.ctx, now);
  }

  /** The daily snapshot and uptime summaries (the midnight job's body). */
  writeDailySnapshot(now: Date): Promise<store.SnapshotRow> {
    return snapshots.writeDailySnapshot(this.ctx, now);
  }

  snapshot(date: string): Promise<store.SnapshotRow | undefined> {
    return store.snapshotOf(this.kernel.db, date, 'platform', 'all');
  }
}

export const createStatusService = (kernel: Kernel): StatusService => new StatusService(kernel);
