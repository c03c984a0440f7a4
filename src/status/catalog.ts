// What the status page shows: services, their components and each component's status.
import type { Executor } from '../db/tx.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import * as store from './store.js';
import type { ComponentRow, ServiceRow } from './store.js';
import { oneOf, type StatusContext } from './context.js';
import { COMPONENT_STATUSES, type ComponentStatus } from './rules.js';

export interface ServiceInput {
  slug: string;
  name: string;
  description?: string | null;
  sortOrder?: number;
  isPublic?: boolean;
}

export interface ServicePatch {
  name?: string;
  description?: string | null;
  sortOrder?: number;
  isPublic?: boolean;
}

export interface ComponentInput {
  serviceSlug: string;
  slug: string;
  name: string;
  sortOrder?: number;
  status?: string;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}[a-z0-9]$|^[a-z0-9]$/;

function slugOk(slug: string): string {
  if (!SLUG.test(slug))
    throw badRequest(`slug must be lowercase letters, digits and dashes, 1-64 characters (got "${slug}")`);
  return slug;
}

export async function serviceOf(db: Executor, slug: string): Promise<ServiceRow> {
  const row = await store.serviceBySlug(db, slug);
  if (!row) throw notFound(`Service ${slug}`);
  return row;
}

export async function componentOf(db: Executor, slug: string): Promise<ComponentRow> {
  const row = await store.componentBySlug(db, slug);
  if (!row) throw notFound(`Component ${slug}`);
  return row;
}

export async function createService(ctx: StatusContext, input: ServiceInput): Promise<ServiceRow> {
  slugOk(input.slug);
  if (!input.name.trim()) throw badRequest('name must not be empty');
  return ctx.write(`service:${input.slug}`, async (trx) => {
    if (await store.serviceBySlug(trx, input.slug)) throw conflict(`A service with slug ${input.slug} already exists`);
    const now = ctx.kernel.clock.now().toISOString();
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

export async function updateService(ctx: StatusContext, slug: string, patch: ServicePatch): Promise<ServiceRow> {
  return ctx.write(`service:${slug}`, async (trx) => {
    const row = await serviceOf(trx, slug);
    const next: Partial<ServiceRow> = { updated_at: ctx.kernel.clock.now().toISOString() };
    if (patch.name !== undefined) next.name = patch.name;
    if (patch.description !== undefined) next.description = patch.description;
    if (patch.sortOrder !== undefined) next.sort_order = patch.sortOrder;
    if (patch.isPublic !== undefined) next.is_public = patch.isPublic ? 1 : 0;
    await store.updateService(trx, row.id, next);
    return { ...row, ...next };
  });
}

export async function createComponent(ctx: StatusContext, input: ComponentInput): Promise<ComponentRow> {
  slugOk(input.slug);
  if (!input.name.trim()) throw badRequest('name must not be empty');
  const status = oneOf<ComponentStatus>('status', input.status ?? 'operational', COMPONENT_STATUSES);
  return ctx.write(`component:${input.slug}`, async (trx) => {
    const service = await serviceOf(trx, input.serviceSlug);
    if (await store.componentBySlug(trx, input.slug))
      throw conflict(`A component with slug ${input.slug} already exists`);
    const now = ctx.kernel.clock.now().toISOString();
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
export async function setComponentStatus(ctx: StatusContext, slug: string, status: string): Promise<ComponentRow> {
  const value = oneOf<ComponentStatus>('status', status, COMPONENT_STATUSES);
  return ctx.write(`component:${slug}`, async (trx) => {
    const row = await componentOf(trx, slug);
    if (row.current_status === value) return row;
    const now = ctx.kernel.clock.now().toISOString();
    await store.updateComponent(trx, row.id, { current_status: value, updated_at: now });
    // Two changes within the same millisecond: the earlier one held for no time, so the later
    // replaces it and (component, changed_at) stays unique, keeping the history's order exact.
    const latest = await store.latestHistory(trx, row.id);
    if (latest?.changed_at === now) await store.setHistoryStatus(trx, latest.id, value);
    else await store.insertHistory(trx, { id: newId(), component_id: row.id, status: value, changed_at: now });
    return { ...row, current_status: value, updated_at: now };
  });
}
