import type { Executor } from '../db/tx.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { isUuid, newId } from '../lib/ids.js';
import * as store from './store.js';
import type { MaintenanceRow } from './store.js';
import { isoOf, oneOf, slugify, type StatusContext } from './context.js';
import { maintenanceEventOf, recordMaintenanceEvent } from './events.js';
import { MAINTENANCE_STATUSES, maintenanceMoveAllowed, maintenanceStatusAt, type MaintenanceStatus } from './rules.js';

export interface MaintenanceInput {
  title: string;
  serviceSlug: string;
  startsAt: string;
  endsAt: string;
  description?: string | null;
}

export interface MaintenanceChange {
  status?: string;
  startsAt?: string;
  endsAt?: string;
}

export interface MaintenanceMove {
  id: string;
  from: string;
  to: string;
}

async function maintenanceOf(db: Executor, idOrSlug: string): Promise<MaintenanceRow> {
  const row = isUuid(idOrSlug)
    ? await store.maintenanceById(db, idOrSlug)
    : await store.maintenanceBySlug(db, idOrSlug);
  if (!row) throw notFound(`Maintenance ${idOrSlug}`);
  return row;
}

/** Schedules a window; one whose start has already passed begins in_progress (or completed). */
export async function createMaintenance(ctx: StatusContext, input: MaintenanceInput): Promise<MaintenanceRow> {
  if (!input.title.trim()) throw badRequest('title must not be empty');
  const startsAt = isoOf('starts', input.startsAt);
  const endsAt = isoOf('ends', input.endsAt);
  if (endsAt <= startsAt) throw badRequest('ends must be after starts');
  const id = newId();
  return ctx.write(`maintenance:${id}`, async (trx) => {
    const service = await store.serviceBySlug(trx, input.serviceSlug);
    if (!service) throw notFound(`Service ${input.serviceSlug}`);
    const now = ctx.kernel.clock.now();
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
    // A window created after its start is under way: subscribers hear it started (one created
    // after its end is history, and makes no news).
    if (row.status === 'in_progress') await recordMaintenanceEvent(ctx, trx, 'maintenance.started', row);
    return row;
  });
}

/** A manual move (rules.ts: maintenanceMoveAllowed) and/or new times. */
export async function updateMaintenance(
  ctx: StatusContext,
  idOrSlug: string,
  input: MaintenanceChange,
): Promise<MaintenanceRow> {
  const status =
    input.status === undefined ? undefined : oneOf<MaintenanceStatus>('status', input.status, MAINTENANCE_STATUSES);
  return ctx.write(`maintenance:${idOrSlug}`, async (trx) => {
    const row = await maintenanceOf(trx, idOrSlug);
    const patch: Partial<MaintenanceRow> = { updated_at: ctx.kernel.clock.now().toISOString() };
    if (input.startsAt !== undefined) patch.starts_at = isoOf('starts', input.startsAt);
    if (input.endsAt !== undefined) patch.ends_at = isoOf('ends', input.endsAt);
    if ((patch.ends_at ?? row.ends_at) <= (patch.starts_at ?? row.starts_at))
      throw badRequest('ends must be after starts');
    if (status !== undefined && status !== row.status) {
      if (!maintenanceMoveAllowed(row.status as MaintenanceStatus, status))
        throw conflict(`Maintenance cannot move from ${row.status} to ${status}`);
      patch.status = status;
    }
    await store.updateMaintenance(trx, row.id, patch);
    const event = patch.status ? maintenanceEventOf(row.status, patch.status) : null;
    if (event) await recordMaintenanceEvent(ctx, trx, event, { ...row, ...patch });
    return { ...row, ...patch };
  });
}

/**
 * The timed moves: scheduled -> in_progress when the window starts, -> completed when it
 * ends (a window missed entirely goes straight to completed). Returns what moved.
 */
export async function advanceMaintenance(ctx: StatusContext, now: Date): Promise<MaintenanceMove[]> {
  const open = await store.openMaintenance(ctx.kernel.db);
  const moves = open
    .map((m) => ({
      id: m.id,
      from: m.status,
      to: maintenanceStatusAt(m.status as MaintenanceStatus, m.starts_at, m.ends_at, now),
    }))
    .filter((m) => m.to !== m.from);
  if (moves.length === 0) return moves;
  const byId = new Map(open.map((m) => [m.id, m]));
  await ctx.write('maintenance', async (trx) => {
    for (const move of moves) {
      // Guarded by the old status: a manual move made meanwhile wins (and makes its own event).
      if (!(await store.moveMaintenance(trx, move.id, move.from, move.to, now.toISOString()))) continue;
      const event = maintenanceEventOf(move.from, move.to);
      const window = byId.get(move.id);
      if (event && window) await recordMaintenanceEvent(ctx, trx, event, { ...window, status: move.to });
    }
  });
  return moves;
}
