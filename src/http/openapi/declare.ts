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
const offsetMeta = Joi.object({
  total: Joi.number().integer().min(0).required(),
  limit: Joi.number().integer().min(1).required(),
  offset: Joi.number().integer().min(0).required(),
  hasNextPage: Joi.boolean().required(),
});

/** 200 with an array of `item` and the offset pagination fields in meta. */
export const offsetList = (item: Schema) => ({ 200: envelope(Joi.array().items(item), offsetMeta) });

/** A JSON body in a protocol's own form (an RFC's), not the envelope. */
export const jsonBody = (
  body: Schema,
  description: string,
  options: { type?: string; otherTypes?: readonly string[] } = {},
): RouteResponse => ({ kind: 'json', body, description, ...options });

/** A body in another content type (a page, an event stream, a feed). */
export const content = (type: string, description: string): RouteResponse => ({ kind: 'content', type, description });

/** An HTML page (docs/openapi.md: pages are in the document, marked as such). */
export const page = (description: string): RouteResponse => content('text/html', description);

export const redirect = (description: string): RouteResponse => ({ kind: 'redirect', description });

export const empty = (description: string): RouteResponse => ({ kind: 'empty', description });

/** An ISO 8601 timestamp in a response schema. */
export const timestamp = () => Joi.string().isoDate();

/** An object whose every field is always present (`T | null` included) unless marked optional(). */
export const shape = (keys: Record<string, Schema>) => Joi.object(keys).prefs({ presence: 'required' });

/**
 * A server-rendered page (docs/openapi.md): HTML, or a redirect to the next step (302) or
 * after a form post (303). Its errors are pages too, at the status of the error.
 */
export const htmlPage = (description: string) => ({
  200: page(description),
  302: redirect('To the next step of the flow'),
  303: redirect('After a form post: see the next page'),
});

/**
 * What a page can say went wrong about the link or form it was given (its own statuses, as
 * pages): incomplete or malformed (400), signed out, refused, unknown, already used, expired.
 */
export const PAGE_ERRORS = ['VALIDATION_FAILED', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'GONE'] as const;
