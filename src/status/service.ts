import type { Kernel } from '../kernel.js';
import type { Executor } from '../db/tx.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { newId, isUuid } from '../lib/ids.js';
import * as store from './store.js';
import type { ComponentRow, IncidentRow, MaintenanceRow, ServiceRow, UpdateRow } from './store.js';
import { StatusProjection } from './projection.js';
import { oneOf, slugify, statusContext, type StatusContext } from './context.js';
import * as maintenance from './maintenance.js';
import type { MaintenanceChange, MaintenanceInput } from './maintenance.js';
import * as snapshots from './snapshots.js';
import {
  COMPONENT_STATUSES,
  INCIDENT_IMPACTS,
  INCIDENT_STATUSES,
  incidentMoveAllowed,
  type ComponentStatus,
  type IncidentImpact,
  type IncidentStatus,
} from './rules.js';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}[a-z0-9]$|^[a-z0-9]$/;

function slugOk(slug: string): string {
  if (!SLUG.test(slug))
    throw badRequest(`slug must be lowercase letters, digits and dashes, 1-64 characters (got "${slug}")`);
  return slug;
}

export interface IncidentDetail extends IncidentRow {
  updates: UpdateRow[];
  services: string[];
  components: string[];
}

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

  private now(): string {
    return this.kernel.clock.now().toISOString();
  }

  private write<T>(key: string, fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.ctx.write(key, fn);
  }

  private async serviceOf(db: Executor, slug: string): Promise<ServiceRow> {
    const row = await store.serviceBySlug(db, slug);
    if (!row) throw notFound(`Service ${slug}`);
    return row;
  }

  private async componentOf(db: Executor, slug: string): Promise<ComponentRow> {
    const row = await store.componentBySlug(db, slug);
    if (!row) throw notFound(`Component ${slug}`);
    return row;
  }

  async createService(input: {
    slug: string;
    name: string;
    description?: string | null;
    sortOrder?: number;
    isPublic?: boolean;
  }): Promise<ServiceRow> {
    slugOk(input.slug);
    if (!input.name.trim()) throw badRequest('name must not be empty');
    return this.write(`service:${input.slug}`, async (trx) => {
      if (await store.serviceBySlug(trx, input.slug))
        throw conflict(`A service with slug ${input.slug} already exists`);
      const now = this.now();
      const row: ServiceRow = {
        id: newId(),
        slug: input.slug,
        name: input.name.trim(),
        description: input.description ?? null,
        sort_order: input.sortOrder ?? 0,
        is_public: input.isPublic === false ? 0 : 1,
        created_at: now,
        updated_at: now,
      };
      await store.insertService(trx, row);
      return row;
    });
  }

  async updateService(
    slug: string,
    patch: { name?: string; description?: string | null; sortOrder?: number; isPublic?: boolean },
  ): Promise<ServiceRow> {
    return this.write(`service:${slug}`, async (trx) => {
      const row = await this.serviceOf(trx, slug);
      const next: Partial<ServiceRow> = { updated_at: this.now() };
      if (patch.name !== undefined) next.name = patch.name;
      if (patch.description !== undefined) next.description = patch.description;
      if (patch.sortOrder !== undefined) next.sort_order = patch.sortOrder;
      if (patch.isPublic !== undefined) next.is_public = patch.isPublic ? 1 : 0;
      await store.updateService(trx, row.id, next);
      return { ...row, ...next };
    });
  }

  listServices(): Promise<ServiceRow[]> {
    return store.allServices(this.kernel.db);
  }

  async createComponent(input: {
    serviceSlug: string;
    slug: string;
    name: string;
    sortOrder?: number;
    status?: string;
  }): Promise<ComponentRow> {
    slugOk(input.slug);
    if (!input.name.trim()) throw badRequest('name must not be empty');
    const status = oneOf<ComponentStatus>('status', input.status ?? 'operational', COMPONENT_STATUSES);
    return this.write(`component:${input.slug}`, async (trx) => {
      const service = await this.serviceOf(trx, input.serviceSlug);
      if (await store.componentBySlug(trx, input.slug))
        throw conflict(`A component with slug ${input.slug} already exists`);
      const now = this.now();
      const row: ComponentRow = {
        id: newId(),
        service_id: service.id,
        slug: input.slug,
        name: input.name.trim(),
        current_status: status,
        sort_order: input.sortOrder ?? 0,
        created_at: now,
        updated_at: now,
      };
      await store.insertComponent(trx, row);
      await store.insertHistory(trx, { id: newId(), component_id: row.id, status, changed_at: now });
      return row;
    });
  }

  /** Sets a component's status; every change is a timestamped history row (uptime is computed from them). */
  async setComponentStatus(slug: string, status: string): Promise<ComponentRow> {
    const value = oneOf<ComponentStatus>('status', status, COMPONENT_STATUSES);
    return this.write(`component:${slug}`, async (trx) => {
      const row = await this.componentOf(trx, slug);
      if (row.current_status === value) return row;
      const now = this.now();
      await store.updateComponent(trx, row.id, { current_status: value, updated_at: now });
      // Two changes within the same millisecond: the earlier one held for no time, so the later
      // replaces it and (component, changed_at) stays unique, keeping the history's order exact.
      const latest = await store.latestHistory(trx, row.id);
      if (latest?.changed_at === now) await store.setHistoryStatus(trx, latest.id, value);
      else await store.insertHistory(trx, { id: newId(), component_id: row.id, status: value, changed_at: now });
      return { ...row, current_status: value, updated_at: now };
    });
  }

  listComponents(): Promise<ComponentRow[]> {
    return store.allComponents(this.kernel.db);
  }

  private async incidentOf(db: Executor, idOrSlug: string): Promise<IncidentRow> {
    const row = isUuid(idOrSlug) ? await store.incidentById(db, idOrSlug) : await store.incidentBySlug(db, idOrSlug);
    if (!row) throw notFound(`Incident ${idOrSlug}`);
    return row;
  }

  async createIncident(input: {
    title: string;
    impact: string;
    status?: string;
    message: string;
    serviceSlugs?: string[];
    componentSlugs?: string[];
    authorName?: string | null;
  }): Promise<IncidentDetail> {
    if (!input.title.trim()) throw badRequest('title must not be empty');
    if (!input.message.trim()) throw badRequest('message must not be empty');
    const impact = oneOf<IncidentImpact>('impact', input.impact, INCIDENT_IMPACTS);
    const status = oneOf<IncidentStatus>('status', input.status ?? 'investigating', INCIDENT_STATUSES);
    if (status === 'postmortem_ready') throw badRequest('a new incident cannot start as postmortem_ready');
    const id = newId();
    await this.write(`incident:${id}`, async (trx) => {
      const services = await Promise.all((input.serviceSlugs ?? []).map((s) => this.serviceOf(trx, s)));
      const components = await Promise.all((input.componentSlugs ?? []).map((s) => this.componentOf(trx, s)));
      const now = this.now();
      await store.insertIncident(trx, {
        id,
        slug: `${slugify(input.title)}-${id.slice(0, 8)}`,
        title: input.title.trim(),
        status,
        impact,
        severity: null,
        description: input.message,
        started_at: now,
        resolved_at: status === 'resolved' ? now : null,
        created_at: now,
        updated_at: now,
      });
      await store.insertUpdate(trx, {
        id: newId(),
        incident_id: id,
        status,
        message: input.message,
        author_name: input.authorName ?? null,
        created_at: now,
      });
      for (const s of services) await store.linkIncidentService(trx, id, s.id);
      for (const c of components) await store.linkIncidentComponent(trx, id, c.id);
    });
    return this.incident(id);
  }

  /** Posts an update: the incident takes its status (and impact when given). */
  async updateIncident(
    idOrSlug: string,
    input: { status: string; message: string; impact?: string; authorName?: string | null },
  ): Promise<IncidentDetail> {
    const status = oneOf<IncidentStatus>('status', input.status, INCIDENT_STATUSES);
    const impact =
      input.impact === undefined ? undefined : oneOf<IncidentImpact>('impact', input.impact, INCIDENT_IMPACTS);
    if (!input.message.trim()) throw badRequest('message must not be empty');
    const id = await this.write(`incident:${idOrSlug}`, async (trx) => {
      const row = await this.incidentOf(trx, idOrSlug);
      if (!incidentMoveAllowed(row.status as IncidentStatus, status))
        throw conflict(`An incident cannot move from ${row.status} to ${status}`);
      const now = this.now();
      const resolvedAt =
        status === 'resolved'
          ? row.status === 'resolved'
            ? row.resolved_at
            : now
          : status === 'postmortem_ready'
            ? row.resolved_at
            : null;
      await store.updateIncident(trx, row.id, {
        status,
        resolved_at: resolvedAt,
        updated_at: now,
        ...(impact ? { impact } : {}),
      });
      await store.insertUpdate(trx, {
        id: newId(),
        incident_id: row.id,
        status,
        message: input.message,
        author_name: input.authorName ?? null,
        created_at: now,
      });
      return row.id;
    });
    return this.incident(id);
  }

  async incident(idOrSlug: string): Promise<IncidentDetail> {
    const db = this.kernel.db;
    const row = await this.incidentOf(db, idOrSlug);
    const [updates, services, components] = await Promise.all([
      store.updatesOfIncident(db, row.id),
      store.serviceSlugsOfIncident(db, row.id),
      store.componentSlugsOfIncident(db, row.id),
    ]);
    return { ...row, updates, services: services.map((s) => s.slug), components: components.map((c) => c.slug) };
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
