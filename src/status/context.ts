import type { Kernel } from '../kernel.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { badRequest } from '../http/errors.js';
import { STATUS_TOPIC } from './projection.js';

/** What every status write needs: the kernel, and a transaction that announces the change. */
export interface StatusContext {
  kernel: Kernel;
  /** Runs fn in a transaction and publishes on the `status` topic inside it. */
  write<T>(key: string, fn: (trx: Executor) => Promise<T>): Promise<T>;
}

export function statusContext(kernel: Kernel): StatusContext {
  return {
    kernel,
    write: (key, fn) =>
      inTransaction(kernel.db, async (trx) => {
        const result = await fn(trx);
        await kernel.changes.publish(trx, STATUS_TOPIC, key);
        return result;
      }),
  };
}

export function oneOf<T extends string>(what: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw badRequest(`${what} must be one of ${allowed.join(', ')} (got "${value}")`);
  return value as T;
}

export function isoOf(what: string, value: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms))
    throw badRequest(`${what} must be an ISO 8601 date-time (got "${value}")`);
  return new Date(ms).toISOString();
}

/** A readable slug from a title; callers append part of the id so it stays unique. */
export const slugify = (title: string): string =>
  title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48) || 'item';
