import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { notFound } from '../http/errors.js';
import { sendRepresentation } from './http-cache.js';
import type { BodyBuilder } from './projection.js';
import type { UptimeWindow } from './rules.js';
import {
  presentComponent,
  presentIncident,
  presentMaintenance,
  presentService,
  presentServiceDetail,
  presentSummary,
  presentUptime,
} from './presenters.js';
import {
  componentsQuery,
  dateParams,
  idParams,
  incidentsQuery,
  responses,
  slugParams,
  subscribeBody,
  SUBSCRIBE_LIMIT,
  windowParams,
} from './schemas.js';
import type { GantryRouteConfig } from '../http/route-config.js';
import { reply } from '../http/envelope.js';
import type { SubscribeInput } from './subscriptions.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The status envelope: data, meta (pagination or null) and error null, with no per-request
 * fields, so one projection's bytes are the same for everyone (docs/interface.md, Status service).
 */
const envelopeBody = (data: unknown, meta: Record<string, unknown> | null = null) => ({
  body: JSON.stringify({ data, meta, error: null }),
  contentType: JSON_TYPE,
});

/** Every answer is a prepared projection, sent with its cache validators; no rate limit. */
export function serving(app: PluginDeps) {
  const { status } = app.services;
  const { clock } = app.kernel;
  const serve =
    (key: (request: Request) => string, build: (request: Request) => BodyBuilder, what: string) =>
    async (request: Request, h: ResponseToolkit) => {
      const name = key(request);
      const ready = status.projection.prepared(name);
      const rep = ready !== undefined ? ready : await status.projection.representation(name, build(request));
      if (!rep) throw notFound(what);
      return sendRepresentation(request, h, rep, clock.now().getTime());
    };
  // Each answer names what it cannot find (a 404), so every route may answer one.
  const options = (
    id: string,
    answers: GantryRouteConfig['responses'],
    extra: { validate?: object; gantry?: GantryRouteConfig } = {},
  ) => ({
    id,
    auth: false as const,
    ...(extra.validate ? { validate: extra.validate } : {}),
    plugins: {
      gantry: {
        rateLimit: false as const,
        invalidParamsStatus: 400 as const,
        responses: answers,
        errors: ['NOT_FOUND'] as const,
        ...extra.gantry,
      },
    },
  });
  return { serve, options };
}

/**
 * The public status service (docs/interface.md, Status service). Anonymous; no rate limit: every
 * answer is a prepared buffer costing less to send than to count, and a per-IP limit would
 * throttle the CDN or proxy that the cache headers invite in front.
 */
export function statusRoutes(app: PluginDeps): ServerRoute[] {
  const { status } = app.services;
  const { serve, options } = serving(app);

  return [
    {
      method: 'GET',
      path: '/status',
      options: options('status.summary', responses.summary),
      handler: serve(
        () => 'summary',
        () => (model) => envelopeBody(presentSummary(model)),
        'Status',
      ),
    },
    {
      method: 'GET',
      path: '/status/services',
      options: options('status.services', responses.services),
      handler: serve(
        () => 'services',
        () => (model) => envelopeBody(model.services.map(presentService)),
        'Services',
      ),
    },
    {
      method: 'GET',
      path: '/status/services/{slug}',
      options: options('status.service', responses.service, { validate: { params: slugParams } }),
      handler: serve(
        (r) => `service:${r.params.slug}`,
        (r) => (model) => {
          const service = model.servicesBySlug.get(String(r.params.slug));
          return service ? envelopeBody(presentServiceDetail(service, model)) : null;
        },
        'Service',
      ),
    },
    {
      method: 'GET',
      path: '/status/components',
      options: options('status.components', responses.components, { validate: { query: componentsQuery } }),
      handler: serve(
        (r) => (r.query.serviceSlug ? `components:${r.query.serviceSlug}` : 'components'),
        (r) => (model) => {
          const slug = r.query.serviceSlug as string | undefined;
          if (slug === undefined)
            return envelopeBody(model.services.flatMap((s) => s.components.map(presentComponent)));
          const service = model.servicesBySlug.get(slug);
          return service ? envelopeBody(service.components.map(presentComponent)) : null;
        },
        'Service',
      ),
    },
    {
      method: 'GET',
      path: '/status/incidents',
      options: options('status.incidents', responses.incidents, { validate: { query: incidentsQuery } }),
      handler: serve(
        (r) => `incidents:${r.query.page}:${r.query.limit}`,
        (r) => (model) => {
          const page = r.query.page as number;
          const limit = r.query.limit as number;
          const items = model.incidents.slice((page - 1) * limit, page * limit).map(presentIncident);
          return envelopeBody(items, { page, limit, total: model.incidents.length });
        },
        'Incidents',
      ),
    },
    {
      method: 'GET',
      path: '/status/incidents/{id}',
      // A malformed id is the interface's 422 (docs/interface.md, Errors); a malformed date or window is a 400.
      options: options('status.incident', responses.incident, {
        validate: { params: idParams },
        gantry: { invalidParamsStatus: 422 },
      }),
      handler: serve(
        (r) => `incident:${String(r.params.id).toLowerCase()}`,
        (r) => (model) => {
          const incident = model.incidentsById.get(String(r.params.id).toLowerCase());
          return incident ? envelopeBody(presentIncident(incident)) : null;
        },
        'Incident',
      ),
    },
    {
      method: 'GET',
      path: '/status/maintenance',
      options: options('status.maintenance', responses.maintenance),
      handler: serve(
        () => 'maintenance',
        () => (model) => envelopeBody(model.maintenance.map(presentMaintenance)),
        'Maintenance',
      ),
    },
    {
      method: 'GET',
      path: '/status/snapshots/{date}',
      options: options('status.snapshot', responses.snapshot, { validate: { params: dateParams } }),
      handler: serve(
        (r) => `snapshot:${r.params.date}`,
        (r) => async () => {
          const row = await status.snapshot(String(r.params.date));
          return row
            ? envelopeBody({
                snapshot_date: row.snapshot_date,
                scope_type: row.scope_type,
                scope_key: row.scope_key,
                payload: JSON.parse(row.payload),
                computed_at: row.computed_at,
              })
            : null;
        },
        'Snapshot',
      ),
    },
    {
      method: 'GET',
      path: '/status/uptime/{window}',
      options: options('status.uptime', responses.uptime, { validate: { params: windowParams } }),
      handler: serve(
        (r) => `uptime:${r.params.window}`,
        (r) => (model) => envelopeBody(presentUptime(model, r.params.window as UptimeWindow)),
        'Uptime',
      ),
    },
    {
      method: 'POST',
      path: '/status/subscriptions',
      options: {
        id: 'status.subscribe',
        auth: false,
        validate: { payload: subscribeBody },
        plugins: {
          gantry: {
            // Counted per client address with the page's form (docs/status.md, Subscriptions).
            rateLimit: SUBSCRIBE_LIMIT,
            responses: responses.subscribed,
            errors: ['CONFLICT'],
          },
        },
      },
      handler: async (request, h) => {
        const result = await status.subscribe(request.payload as SubscribeInput);
        return reply(request, h, result, { status: result.type === 'webhook' ? 201 : 202 });
      },
    },
  ];
}
