import Joi, { type Schema } from 'joi';
import type { RouteResponse } from '../route-config.js';

/**
 * What routes declare under `plugins.gantry.responses` (docs/openapi.md). The schemas describe
 * the answer exactly (unknown keys refused), so a presenter that leaks a column fails a test.
 * hapi never validates them at run time (no cost on a request); the tests do, for every answer.
 */

/** Success in the envelope (docs/interface.md, Envelope): `data`; `meta` adds to requestId and durationMs. */
export const envelope = (data: Schema, meta?: Schema, description?: string): RouteResponse => ({
  kind: 'envelope',
  data,
  meta,
  description,
});

/** 200 with `data` in the envelope. */
export const ok = (data: Schema) => ({ 200: envelope(data) });

/** 201 with the created resource in the envelope. */
export const created = (data: Schema) => ({ 201: envelope(data) });

/** 202: accepted (mail queued whatever the address), `data` in the envelope. */
export const accepted = (data: Schema) => ({ 202: envelope(data) });

/** docs/interface.md, Pagination: an offset page's meta. */
export const offsetMeta = Joi.object({
  total: Joi.number().integer().min(0).required(),
  limit: Joi.number().integer().min(1).required(),
  offset: Joi.number().integer().min(0).required(),
  hasNextPage: Joi.boolean().required(),
});

/** docs/interface.md, Pagination: a cursor page's meta. */
export const cursorMeta = Joi.object({
  limit: Joi.number().integer().min(1).required(),
  hasNextPage: Joi.boolean().required(),
  nextCursor: Joi.string().allow(null).required(),
});

/** 200 with an array of `item` and the offset pagination fields in meta. */
export const offsetList = (item: Schema) => ({ 200: envelope(Joi.array().items(item), offsetMeta) });

/** A JSON body in a protocol's own form (an RFC's), not the envelope. */
export const jsonBody = (body: Schema, description: string, type?: string): RouteResponse => ({
  kind: 'json',
  body,
  description,
  type,
});

/** A body in another content type (a page, an event stream, a feed). */
export const content = (type: string, description: string): RouteResponse => ({ kind: 'content', type, description });

/** An HTML page (docs/openapi.md: pages are in the document, marked as such). */
export const page = (description: string): RouteResponse => content('text/html', description);

export const redirect = (description: string): RouteResponse => ({ kind: 'redirect', description });

export const empty = (description: string): RouteResponse => ({ kind: 'empty', description });

/** Field helpers for response schemas: an ISO 8601 timestamp, an id, and their `| null` forms. */
export const timestamp = () => Joi.string().isoDate();
export const nullable = (schema: Schema) => schema.allow(null).required();
