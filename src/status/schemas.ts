import Joi, { type Schema } from 'joi';
import { content, empty, envelope, jsonBody, page, shape, timestamp } from '../http/openapi/declare.js';
import type { RateLimitRule } from '../http/route-config.js';
import { canonicalEmail } from '../identity/service.js';
import {
  COMPONENT_STATUSES,
  INCIDENT_IMPACTS,
  INCIDENT_STATUSES,
  MAINTENANCE_STATUSES,
  UPTIME_WINDOWS,
} from './rules.js';

export const slugParams = Joi.object({ slug: Joi.string().max(128).required() });
export const idParams = Joi.object({ id: Joi.string().guid().required() });
/** YYYY-MM-DD and a real calendar date; anything else is a 400. */
export const dateParams = Joi.object({
  date: Joi.string()
    .pattern(/^\d{4}-\d{2}-\d{2}$/)
    .custom((value: string, helpers) =>
      new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) === value ? value : helpers.error('any.invalid'),
    )
    .required(),
});
export const windowParams = Joi.object({
  window: Joi.string()
    .valid(...UPTIME_WINDOWS)
    .required(),
});
// Unknown query keys pass (cache busters from proxies); the answer does not depend on them.
export const componentsQuery = Joi.object({ serviceSlug: Joi.string().max(128) }).unknown(true);
export const incidentsQuery = Joi.object({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
}).unknown(true);

/**
 * Subscribing (docs/status.md, Subscriptions): an address or a webhook, optionally only some
 * components. The address takes identity's one canonical form, so one mailbox is one subscriber.
 */
const subscriberEmail = Joi.string()
  .max(320)
  .custom((value: string, helpers) => {
    const canonical = canonicalEmail(value);
    if (!canonical.ok) return helpers.message({ custom: `{{#label}} ${canonical.reason}` });
    if (Joi.string().email({ tlds: false }).max(254).validate(canonical.email).error)
      return helpers.message({ custom: '{{#label}} must be a valid email' });
    return canonical.email;
  });
export const subscribeBody = Joi.object({
  email: subscriberEmail,
  webhookUrl: Joi.string()
    .max(2048)
    .uri({ scheme: ['http', 'https'] }),
  componentIds: Joi.array().items(Joi.string().guid()).max(100),
}).xor('email', 'webhookUrl');

/**
 * Subscriptions asked for from one client address (the API and the page's form together):
 * enough for a person or a team, not for mailing strangers in bulk (docs/status.md, Limits).
 */
export const SUBSCRIBE_LIMIT: RateLimitRule = { limit: 10, windowSec: 3600, acrossNodes: true };

const statusValue = Joi.string().valid(...COMPONENT_STATUSES);
const service = shape({
  id: Joi.string(),
  slug: Joi.string(),
  name: Joi.string(),
  description: Joi.string().allow(null, ''),
  current_status: statusValue,
  indicator: Joi.string(),
  sort_order: Joi.number(),
  is_public: Joi.boolean(),
  created_at: timestamp(),
  updated_at: timestamp(),
});
const component = shape({
  id: Joi.string(),
  slug: Joi.string(),
  name: Joi.string(),
  current_status: statusValue,
  indicator: Joi.string(),
  service_id: Joi.string(),
});
const incident = shape({
  id: Joi.string(),
  slug: Joi.string(),
  title: Joi.string(),
  status: Joi.string().valid(...INCIDENT_STATUSES),
  impact: Joi.string().valid(...INCIDENT_IMPACTS),
  severity: Joi.string().allow(null),
  description: Joi.string().allow(null, ''),
  started_at: timestamp(),
  resolved_at: timestamp().allow(null),
  updates: Joi.array().items(
    shape({
      id: Joi.string(),
      status: Joi.string().valid(...INCIDENT_STATUSES),
      message: Joi.string().allow(''),
      author_name: Joi.string().allow(null),
      created_at: timestamp(),
    }),
  ),
});
const maintenance = shape({
  id: Joi.string(),
  slug: Joi.string(),
  title: Joi.string(),
  status: Joi.string().valid(...MAINTENANCE_STATUSES),
  starts_at: timestamp(),
  ends_at: timestamp(),
  service_id: Joi.string().allow(null),
});
const uptimeWindows = shape(Object.fromEntries(UPTIME_WINDOWS.map((w) => [w, Joi.number()])));

/**
 * The status envelope (docs/interface.md, Status service): no per-request meta, so `meta` is
 * the pagination or null; 304 answers a matching conditional request.
 */
const statusBody = (data: Schema, meta: Schema = Joi.valid(null)) => ({
  200: jsonBody(
    shape({ data, meta, error: Joi.valid(null) }),
    'The status envelope: the same bytes for everyone for one projection',
  ),
  304: empty('Not modified (If-None-Match or If-Modified-Since)'),
});

export const responses = {
  summary: statusBody(
    shape({
      headline: Joi.string(),
      status: statusValue,
      indicator: Joi.string(),
      services: Joi.array().items(service),
      incidents: Joi.array().items(incident),
      maintenance: Joi.array().items(maintenance),
      updated_at: timestamp(),
    }),
  ),
  services: statusBody(Joi.array().items(service)),
  service: statusBody(
    shape({
      id: Joi.string(),
      slug: Joi.string(),
      name: Joi.string(),
      description: Joi.string().allow(null, ''),
      current_status: statusValue,
      indicator: Joi.string(),
      components: Joi.array().items(
        shape({ id: Joi.string(), slug: Joi.string(), name: Joi.string(), current_status: statusValue }),
      ),
      incidents: Joi.array().items(incident),
      maintenance: Joi.array().items(maintenance),
      uptime: uptimeWindows,
    }),
  ),
  components: statusBody(Joi.array().items(component)),
  incidents: statusBody(
    Joi.array().items(incident),
    shape({ page: Joi.number().integer(), limit: Joi.number().integer(), total: Joi.number().integer() }),
  ),
  incident: statusBody(incident),
  maintenance: statusBody(Joi.array().items(maintenance)),
  snapshot: statusBody(
    shape({
      snapshot_date: Joi.string(),
      scope_type: Joi.string(),
      scope_key: Joi.string(),
      payload: Joi.object().unknown(),
      computed_at: timestamp(),
    }),
  ),
  uptime: statusBody(
    shape({
      scope_type: Joi.string(),
      scope_key: Joi.string(),
      window: Joi.string().valid(...UPTIME_WINDOWS),
      uptime_percent: Joi.number(),
      downtime_minutes: Joi.number(),
      incident_count: Joi.number().integer(),
      computed_at: timestamp(),
    }),
  ),
  page: { 200: page('The human status page'), 304: empty('Not modified') },
  subscribed: {
    201: envelope(
      shape({
        type: Joi.valid('webhook'),
        id: Joi.string(),
        webhookUrl: Joi.string(),
        componentIds: Joi.array().items(Joi.string()).allow(null),
        secret: Joi.string(),
        createdAt: timestamp(),
      }),
      undefined,
      'A webhook subscription, with the signing secret (shown this once)',
    ),
    202: envelope(
      shape({ type: Joi.valid('email'), email: Joi.string() }),
      undefined,
      'Accepted: a confirmation mail goes to the address unless it is already subscribed or has had its confirmations for the day',
    ),
  },
  feed: { 200: content('application/atom+xml', 'Atom feed of incidents'), 304: empty('Not modified') },
};
