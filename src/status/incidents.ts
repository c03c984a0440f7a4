import type { Executor } from '../db/tx.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { isUuid, newId } from '../lib/ids.js';
import * as store from './store.js';
import type { IncidentRow, UpdateRow } from './store.js';
import { oneOf, slugify, type StatusContext } from './context.js';
import { componentOf, serviceOf } from './catalog.js';
import { recordIncidentEvent } from './events.js';
import {
  INCIDENT_IMPACTS,
  INCIDENT_STATUSES,
  incidentMoveAllowed,
  type IncidentImpact,
  type IncidentStatus,
} from './rules.js';

export interface IncidentInput {
  title: string;
  impact: string;
  status?: string;
  message: string;
  serviceSlugs?: string[];
  componentSlugs?: string[];
  authorName?: string | null;
}

export interface IncidentUpdateInput {
  status: string;
  message: string;
  impact?: string;
  authorName?: string | null;
}

export interface IncidentDetail extends IncidentRow {
  updates: UpdateRow[];
  services: string[];
  components: string[];
}

async function incidentOf(db: Executor, idOrSlug: string): Promise<IncidentRow> {
  const row = isUuid(idOrSlug) ? await store.incidentById(db, idOrSlug) : await store.incidentBySlug(db, idOrSlug);
  if (!row) throw notFound(`Incident ${idOrSlug}`);
  return row;
}

/** Opens an incident; its message is the first update. */
export async function createIncident(ctx: StatusContext, input: IncidentInput): Promise<IncidentDetail> {
  if (!input.title.trim()) throw badRequest('title must not be empty');
  if (!input.message.trim()) throw badRequest('message must not be empty');
  const impact = oneOf<IncidentImpact>('impact', input.impact, INCIDENT_IMPACTS);
  const status = oneOf<IncidentStatus>('status', input.status ?? 'investigating', INCIDENT_STATUSES);
  if (status === 'postmortem_ready') throw badRequest('a new incident cannot start as postmortem_ready');
  const id = newId();
  await ctx.write(`incident:${id}`, async (trx) => {
    const services = await Promise.all((input.serviceSlugs ?? []).map((s) => serviceOf(trx, s)));
    const components = await Promise.all((input.componentSlugs ?? []).map((s) => componentOf(trx, s)));
    const now = ctx.kernel.clock.now().toISOString();
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
    await recordIncidentEvent(ctx, trx, status === 'resolved' ? 'incident.resolved' : 'incident.created', id);
  });
  return incidentDetail(ctx.kernel.db, id);
}

/** Posts an update: the incident takes its status (and impact when given). */
export async function updateIncident(
  ctx: StatusContext,
  idOrSlug: string,
  input: IncidentUpdateInput,
): Promise<IncidentDetail> {
  const status = oneOf<IncidentStatus>('status', input.status, INCIDENT_STATUSES);
  const impact =
    input.impact === undefined ? undefined : oneOf<IncidentImpact>('impact', input.impact, INCIDENT_IMPACTS);
  if (!input.message.trim()) throw badRequest('message must not be empty');
  const id = await ctx.write(`incident:${idOrSlug}`, async (trx) => {
    const row = await incidentOf(trx, idOrSlug);
    if (!incidentMoveAllowed(row.status as IncidentStatus, status))
      throw conflict(`An incident cannot move from ${row.status} to ${status}`);
    const now = ctx.kernel.clock.now().toISOString();
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
    // Resolving is its own event; every other update (reopening, a postmortem) is an update.
    const resolves = status === 'resolved' && row.status !== 'resolved';
    await recordIncidentEvent(ctx, trx, resolves ? 'incident.resolved' : 'incident.updated', row.id);
    return row.id;
  });
  return incidentDetail(ctx.kernel.db, id);
}

/** An incident with its updates and the slugs of what it affects. */
export async function incidentDetail(db: Executor, idOrSlug: string): Promise<IncidentDetail> {
  const row = await incidentOf(db, idOrSlug);
  const [updates, services, components] = await Promise.all([
    store.updatesOfIncident(db, row.id),
    store.serviceSlugsOfIncident(db, row.id),
    store.componentSlugsOfIncident(db, row.id),
  ]);
  return { ...row, updates, services: services.map((s) => s.slug), components: components.map((c) => c.slug) };
}
