import Joi from 'joi';
import { hmacSha256, safeEqual } from '../lib/crypto.js';
import { badRequest } from './errors.js';

/** Offset paging query (docs/interface.md, Pagination: limit 1..50 default 20, offset >= 0); routes may raise the max. */
export function offsetQuery(options: { max?: number; defaultLimit?: number } = {}) {
  return {
    limit: Joi.number()
      .integer()
      .min(1)
      .max(options.max ?? 50)
      .default(options.defaultLimit ?? 20),
    offset: Joi.number().integer().min(0).default(0),
  };
}

// A type alias, not an interface: it must fit reply()'s `meta: Record<string, unknown>`.
export type OffsetMeta = {
  total: number;
  limit: number;
  offset: number;
  hasNextPage: boolean;
};

export function offsetMeta(total: number, limit: number, offset: number): OffsetMeta {
  return { total, limit, offset, hasNextPage: offset + limit < total };
}

/** Cursor paging query (docs/interface.md, Pagination: limit default 25; cursor opaque). */
export function cursorQuery(options: { max?: number; defaultLimit?: number } = {}) {
  return {
    limit: Joi.number()
      .integer()
      .min(1)
      .max(options.max ?? 100)
      .default(options.defaultLimit ?? 25),
    cursor: Joi.string().max(1024),
  };
}

export interface CursorPage<T> {
  items: T[];
  hasNextPage: boolean;
  nextCursor: string | null;
}

/**
 * Opaque, tamper-proof cursors: base64url JSON plus an HMAC over it and a scope (the list it
 * belongs to, e.g. "notifications:<userId>"), so a forged or foreign cursor is a 400.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  private mac(scope: string, body: string): string {
    return hmacSha256(this.key, `${scope}\n${body}`).subarray(0, 16).toString('base64url');
  }

  encode(scope: string, position: Record<string, unknown>): string {
    const body = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${body}.${this.mac(scope, body)}`;
  }

  decode<T extends Record<string, unknown>>(scope: string, cursor: string): T {
    const [body, mac, extra] = cursor.split('.');
    if (!body || !mac || extra !== undefined || !safeEqual(mac, this.mac(scope, body))) {
      throw badRequest('The cursor is invalid; pass back the nextCursor of the previous page', [
        { field: 'cursor', message: 'invalid cursor' },
      ]);
    }
    try {
      const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      if (typeof value !== 'object' || value === null) throw new Error('not an object');
      return value as T;
    } catch {
      throw badRequest('The cursor is invalid', [{ field: 'cursor', message: 'invalid cursor' }]);
    }
  }

  /**
   * Turns limit+1 fetched rows into a page: the extra row only proves there is a next page.
   * `position` gives the keyset position of a row (what the next query continues after).
   */
  page<T>(scope: string, rows: T[], limit: number, position: (row: T) => Record<string, unknown>): CursorPage<T> {
    const hasNextPage = rows.length > limit;
    const items = hasNextPage ? rows.slice(0, limit) : rows;
    return {
      items,
      hasNextPage,
      nextCursor: hasNextPage && items.length > 0 ? this.encode(scope, position(items[items.length - 1])) : null,
    };
  }
}
