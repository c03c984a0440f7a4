import type { Kernel } from '../kernel.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { newId, isUuid } from '../lib/ids.js';
import * as store from './store.js';
import type { ComponentRow, IncidentRow, MaintenanceRow, ServiceRow, UpdateRow } from './store.js';
import { buildModel, loadRows } from './model.js';
import { presentUptime, snapshotPayload } from './presenters.js';
import { StatusProjection, STATUS_TOPIC } from './projection.js';
import {
  COMPONENT_STATUSES,
  INCIDENT_IMPACTS,
  INCIDENT_STATUSES,
  MAINTENANCE_STATUSES,
  UPTIME_WINDOWS,
  incidentMoveAllowed,
  maintenanceMoveAllowed,
  maintenanceStatusAt,
  type ComponentStatus,
  type IncidentImpact,
  type IncidentStatus,
  type MaintenanceStatus,
} from './rules.js';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}[a-z0-9]$|^[a-z0-9]$/;

function oneOf<T extends string>(what: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw badRequest(`${what} must be one of ${allowed.join(', ')} (got "${value}")`);
  return value as T;
}

function slugOk(slug: string): string {
  if (!SLUG.test(slug)) throw badRequest(`slug must be lowercase letters, digits and dashes, 1-64 characters (got "${slug}")`);
  return slug;
}

function isoOf(what: string, value: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) throw badRequest(`${what} must be an ISO 8601 date-time (got "${value}")`);
  return new Date(ms).toISOString();
}

const slugify = (title: string): string =>
  title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48) || 'item';

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

  constructor(private readonly kernel: Kernel) {
    this.projection = new StatusProjection(kernel);
  }

  private now(): string {
    return this.kernel.clock.now().toISOString();
  }

  private write<T>(key: string, fn: (trx: Executor) => Promise<T>): Promise<T> {
    return inTransaction(this.kernel.db, async (trx) => {
      const result = await fn(trx);
      await this.kernel.changes.publish(trx, STATUS_TOPIC, key);
      return result;
    });
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

  async createService(input: { slug: string; name: string; description?: string | null; sortOrder?: number; isPublic?: boolean }): Promise<ServiceRow> {
    slugOk(input.slug);
    if (!input.name.trim()) throw badRequest('name must not be empty');
    return this.write(`service:${input.slug}`, async (trx) => {
      if (await store.serviceBySlug(trx, input.slug)) throw conflict(`A service with slug ${input.slug} already exists`);
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

  async updateService(slug: string, patch: { name?: string; description?: string | null; sortOrder?: number; isPublic?: boolean }): Promise<ServiceRow> {
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

  async createComponent(input: { serviceSlug: string; slug: string; name: string; sortOrder?: number; status?: string }): Promise<ComponentRow> {
    slugOk(input.slug);
    if (!input.name.trim()) throw badRequest('name must not be empty');
    const status = oneOf<ComponentStatus>('status', input.status ?? 'operational', COMPONENT_STATUSES);
    return this.write(`component:${input.slug}`, async (trx) => {
      const service = await this.serviceOf(trx, input.serviceSlug);
      if (await store.componentBySlug(trx, input.slug)) throw conflict(`A component with slug ${input.slug} already exists`);
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
      await store.insertUpdate(trx, { id: newId(), incident_id: id, status, message: input.message, author_name: input.authorName ?? null, created_at: now });
      for (const s of services) await store.linkIncidentService(trx, id, s.id);
      for (const c of components) await store.linkIncidentComponent(trx, id, c.id);
    });
    return this.incident(id);
  }

  /** Posts an update: the incident takes its status (and impact when given). */
  async updateIncident(idOrSlug: string, input: { status: string; message: string; impact?: string; authorName?: string | null }): Promise<IncidentDetail> {
    const status = oneOf<IncidentStatus>('status', input.status, INCIDENT_STATUSES);
    const impact = input.impact === undefined ? undefined : oneOf<IncidentImpact>('impact', input.impact, INCIDENT_IMPACTS);
    if (!input.message.trim()) throw badRequest('message must not be empty');
    const id = await this.write(`incident:${idOrSlug}`, async (trx) => {
      const row = await this.incidentOf(trx, idOrSlug);
      if (!incidentMoveAllowed(row.status as IncidentStatus, status)) throw conflict(`An incident cannot move from ${row.status} to ${status}`);
      const now = this.now();
      const resolvedAt = status === 'resolved' ? (row.status === 'resolved' ? row.resolved_at : now) : status === 'postmortem_ready' ? row.resolved_at : null;
      await store.updateIncident(trx, row.id, { status, resolved_at: resolvedAt, updated_at: now, ...(impact ? { impact } : {}) });
      await store.insertUpdate(trx, { id: newId(), incident_id: row.id, status, message: input.message, author_name: input.authorName ?? null, created_at: now });
      return row.id;
    });
    return this.incident(id);
  }

  async incident(idOrSlug: string): Promise<IncidentDetail> {
    const db = this.kernel.db;
    const row = await this.incidentOf(db, idOrSlug);
    const [updates, services, components] = await Promise.all([
      db.selectFrom('status_incident_updates').selectAll().where('incident_id', '=', row.id).orderBy('created_at').orderBy('id').execute(),
      db.selectFrom('status_incident_services as l').innerJoin('status_services as s', 's.id', 'l.service_id').select('s.slug').where('l.incident_id', '=', row.id).execute(),
      db.selectFrom('status_incident_components as l').innerJoin('status_components as c', 'c.id', 'l.component_id').select('c.slug').where('l.incident_id', '=', row.id).execute(),
    ]);
    return { ...row, updates, services: services.map((s) => s.slug), components: components.map((c) => c.slug) };
  }

  listIncidents(): Promise<IncidentRow[]> {
    return store.allIncidents(this.kernel.db);
  }

  private async maintenanceOf(db: Executor, idOrSlug: string): Promise<MaintenanceRow> {
    const row = isUuid(idOrSlug) ? await store.maintenanceById(db, idOrSlug) : await store.maintenanceBySlug(db, idOrSlug);
    if (!row) throw notFound(`Maintenance ${idOrSlug}`);
    return row;
  }

  async createMaintenance(input: { title: string; serviceSlug: string; startsAt: string; endsAt: string; description?: string | null }): Promise<MaintenanceRow> {
    if (!input.title.trim()) throw badRequest('title must not be empty');
    const startsAt = isoOf('starts', input.startsAt);
    const endsAt = isoOf('ends', input.endsAt);
    if (endsAt <= startsAt) throw badRequest('ends must be after starts');
    const id = newId();
    return this.write(`maintenance:${id}`, async (trx) => {
      const service = await this.serviceOf(trx, input.serviceSlug);
      const now = this.kernel.clock.now();
      const row: MaintenanceRow = {
        id,
        slug: `${slugify(input.title)}-${id.slice(0, 8)}`,
        title: input.title.trim(),
        description: input.description ?? null,
        status: maintenanceStatusAt('scheduled', startsAt, endsAt, now),
        starts_at: startsAt,
        ends_at: endsAt,
        service_id: service.id,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      };
      await store.insertMaintenance(trx, row);
      return row;
    });
  }

  async updateMaintenance(idOrSlug: string, input: { status?: string; startsAt?: string; endsAt?: string }): Promise<MaintenanceRow> {
    const status = input.status === undefined ? undefined : oneOf<MaintenanceStatus>('status', input.status, MAINTENANCE_STATUSES);
    return this.write(`maintenance:${idOrSlug}`, async (trx) => {
      const row = await this.maintenanceOf(trx, idOrSlug);
      const patch: Partial<MaintenanceRow> = { updated_at: this.now() };
      if (input.startsAt !== undefined) patch.starts_at = isoOf('starts', input.startsAt);
      if (input.endsAt !== undefined) patch.ends_at = isoOf('ends', input.endsAt);
      if ((patch.ends_at ?? row.ends_at) <= (patch.starts_at ?? row.starts_at)) throw badRequest('ends must be after starts');
      if (status !== undefined && status !== row.status) {
        if (!maintenanceMoveAllowed(row.status as MaintenanceStatus, status)) throw conflict(`Maintenance cannot move from ${row.status} to ${status}`);
        patch.status = status;
      }
      await store.updateMaintenance(trx, row.id, patch);
      return { ...row, ...patch };
    });
  }

  listMaintenance(): Promise<MaintenanceRow[]> {
    return store.allMaintenance(this.kernel.db);
  }

  /**
   * The timed moves: scheduled -> in_progress when the window starts, -> completed when it
   * ends (a window missed entirely goes straight to completed). Returns what moved.
   */
  async advanceMaintenance(now: Date): Promise<Array<{ id: string; from: string; to: string }>> {
    const open = await store.openMaintenance(this.kernel.db);
    const moves = open
      .map((m) => ({ id: m.id, from: m.status, to: maintenanceStatusAt(m.status as MaintenanceStatus, m.starts_at, m.ends_at, now) }))
      .filter((m) => m.to !== m.from);
    if (moves.length === 0) return moves;
    await this.write('maintenance', async (trx) => {
      for (const move of moves) {
        await trx.updateTable('status_maintenance').set({ status: move.to, updated_at: now.toISOString() }).where('id', '=', move.id).where('status', '=', move.from).execute();
      }
    });
    return moves;
  }

  /**
   * The daily snapshot (run at midnight UTC): the day that just ended, as the platform stood
   * at its end, with each service's uptime over that day; and the uptime summaries of every
   * window. Running it again for the same day replaces the row.
   */
  async writeDailySnapshot(now: Date): Promise<store.SnapshotRow> {
    const snapshotDate = new Date(now.getTime() - 1).toISOString().slice(0, 10);
    const model = buildModel(await loadRows(this.kernel.db, now), now);
    const computedAt = now.toISOString();
    const row: store.SnapshotRow = { snapshot_date: snapshotDate, scope_type: 'platform', scope_key: 'all', payload: JSON.stringify(snapshotPayload(model)), computed_at: computedAt };
    await this.write(`snapshot:${snapshotDate}`, async (trx) => {
      await store.upsertSnapshot(trx, row);
      for (const window of UPTIME_WINDOWS) await store.upsertUptimeSummary(trx, window, JSON.stringify(presentUptime(model, window)), computedAt);
    });
    return row;
  }

  snapshot(date: string): Promise<store.SnapshotRow | undefined> {
    return store.snapshotOf(this.kernel.db, date, 'platform', 'all');
  }
}

export const createStatusService = (kernel: Kernel): StatusService => new StatusService(kernel);
