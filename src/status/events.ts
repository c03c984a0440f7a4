import type { Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import * as store from './store.js';
import * as events from './event-store.js';
import type { MaintenanceRow } from './store.js';
import type { StatusContext } from './context.js';

/**
 * What subscribers are told (docs/status.md, Subscriptions): one row per event, written in the
 * transaction that publishes the change, so the publish call does no more than this insert
 * whatever the number of subscribers; the fan-out job does the rest. Only what the public
 * status service shows is told: an incident touching only private services, or a private
 * service's maintenance, makes no event.
 */
const STATUS_EVENT_TYPES = [
  'incident.created',
  'incident.updated',
  'incident.resolved',
  'maintenance.started',
  'maintenance.completed',
] as const;
export type StatusEventType = (typeof STATUS_EVENT_TYPES)[number];

/** The webhook body (and the mails' source): the event as of when it happened. */
export interface IncidentEventBody {
  id: string;
  type: StatusEventType;
  created_at: string;
  incident: {
    id: string;
    title: string;
    status: string;
    impact: string;
    started_at: string;
    resolved_at: string | null;
    url: string;
    services: Array<{ id: string; slug: string; name: string }>;
    components: Array<{ id: string; slug: string; name: string; service: { id: string; slug: string; name: string } }>;
    /** Newest first, as in the API. */
    updates: Array<{ status: string; message: string; created_at: string }>;
  };
}

export interface MaintenanceEventBody {
  id: string;
  type: StatusEventType;
  created_at: string;
  maintenance: {
    id: string;
    title: string;
    description: string | null;
    status: string;
    starts_at: string;
    ends_at: string;
    url: string;
    service: { id: string; slug: string; name: string };
  };
}

export type StatusEventBody = IncidentEventBody | MaintenanceEventBody;

const pageUrl = (ctx: StatusContext) => `${ctx.kernel.config.publicUrl}/status`;

/** Records an incident's event in the caller's (publishing) transaction; nothing for a private one. */
export async function recordIncidentEvent(
  ctx: StatusContext,
  trx: Executor,
  type: StatusEventType,
  incidentId: string,
): Promise<void> {
  const incident = await store.incidentById(trx, incidentId);
  if (!incident) return;
  const [services, components, updates] = await Promise.all([
    events.servicesOfIncident(trx, incidentId),
    events.componentsOfIncident(trx, incidentId),
    store.updatesOfIncident(trx, incidentId),
  ]);
  const linked = services.length + components.length > 0;
  const publicServices = services.filter((s) => s.is_public === 1);
  const publicComponents = components.filter((c) => c.is_public === 1);
  if (linked && publicServices.length + publicComponents.length === 0) return;
  // Who it concerns: the components it names and every component of the services it names;
  // an incident naming nothing is platform-wide and concerns everyone (null).
  const targets = linked
    ? [
        ...new Set([
          ...publicComponents.map((c) => c.id),
          ...(await events.componentIdsOfServices(
            trx,
            publicServices.map((s) => s.id),
          )),
        ]),
      ]
    : null;
  const id = newId();
  const createdAt = ctx.kernel.clock.now().toISOString();
  const body: IncidentEventBody = {
    id,
    type,
    created_at: createdAt,
    incident: {
      id: incident.id,
      title: incident.title,
      status: incident.status,
      impact: incident.impact,
      started_at: incident.started_at,
      resolved_at: incident.resolved_at,
      url: `${pageUrl(ctx)}/incidents/${incident.id}`,
      services: publicServices.map((s) => ({ id: s.id, slug: s.slug, name: s.name })),
      components: publicComponents.map((c) => ({
        id: c.id,
        slug: c.slug,
        name: c.name,
        service: { id: c.service_id, slug: c.service_slug, name: c.service_name },
      })),
      updates: [...updates].reverse().map((u) => ({ status: u.status, message: u.message, created_at: u.created_at })),
    },
  };
  await insert(trx, body, incident.id, targets);
}

/** Records a maintenance window's start or end; nothing for a private service's window. */
export async function recordMaintenanceEvent(
  ctx: StatusContext,
  trx: Executor,
  type: 'maintenance.started' | 'maintenance.completed',
  window: MaintenanceRow,
): Promise<void> {
  const service = await store.serviceById(trx, window.service_id);
  if (!service || service.is_public !== 1) return;
  const id = newId();
  const body: MaintenanceEventBody = {
    id,
    type,
    created_at: ctx.kernel.clock.now().toISOString(),
    maintenance: {
      id: window.id,
      title: window.title,
      description: window.description,
      status: type === 'maintenance.started' ? 'in_progress' : 'completed',
      starts_at: window.starts_at,
      ends_at: window.ends_at,
      url: pageUrl(ctx),
      service: { id: service.id, slug: service.slug, name: service.name },
    },
  };
  await insert(trx, body, window.id, await events.componentIdsOfServices(trx, [service.id]));
}

function insert(trx: Executor, body: StatusEventBody, subjectId: string, targets: string[] | null) {
  return events.insertEvent(trx, {
    id: body.id,
    type: body.type,
    subject_id: subjectId,
    targets: targets === null ? null : JSON.stringify(targets),
    payload: JSON.stringify(body),
    created_at: body.created_at,
    fanout_after: '',
    fanned_out_at: null,
  });
}

/** The event a move of a maintenance window makes, if any (a cancelled window makes none). */
export function maintenanceEventOf(from: string, to: string): 'maintenance.started' | 'maintenance.completed' | null {
  if (to === 'in_progress' && from !== 'in_progress') return 'maintenance.started';
  if (to === 'completed' && from !== 'completed') return 'maintenance.completed';
  return null;
}
