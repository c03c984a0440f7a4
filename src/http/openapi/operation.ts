import type { RequestRoute } from '@hapi/hapi';
import Joi, { type Schema } from 'joi';
import { ErrorCodes, type ErrorCode } from '../errors.js';
import type { GantryRouteConfig, RateLimitRule, RouteResponse } from '../route-config.js';
import type { PageKit } from '../page-kit.js';
import { errorEnvelopeWith, successEnvelope, toJsonSchema } from './schemas.js';

type Json = Record<string, unknown>;

/** The route's auth as the document needs it: off, or the strategies and the mode. */
export type RouteAuth = false | { strategies: readonly string[]; mode: string };

export interface OperationContext {
  shared: Record<string, Json>;
  /** The security requirements one strategy offers a route (its scope, its API keys). */
  security(strategy: string, config: GantryRouteConfig): Json[];
  /** The limit a rule enforces here (GANTRY_RATE_LIMIT_MULTIPLIER applied). */
  effectiveLimit(rule: RateLimitRule): number;
  defaultRateLimit: RateLimitRule;
  pages: PageKit;
}

const JSON_TYPE = 'application/json';
const BODY_METHODS = new Set(['post', 'put', 'patch']);

/** A joi object schema's properties as JSON Schema (hapi compiles plain objects to joi), and which are required. */
function propertiesOf(schema: unknown, ctx: OperationContext) {
  if (!Joi.isSchema(schema)) return { properties: {} as Record<string, Json>, required: new Set<string>() };
  const converted = toJsonSchema(schema as Schema, ctx.shared);
  return {
    properties: (converted.properties as Record<string, Json> | undefined) ?? {},
    required: new Set((converted.required as string[] | undefined) ?? []),
  };
}

/** Query or header parameters from the route's joi schema. */
function parameters(where: 'query' | 'header', schema: unknown, ctx: OperationContext): Json[] {
  const { properties, required } = propertiesOf(schema, ctx);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: required.has(name),
    schema: property,
  }));
}

/** The names of a hapi path template's parameters (`{id}`, `{p?}`, `{p*}`, `{p*2}`). */
const templateParameters = (path: string) => [...path.matchAll(/\{(\w+)[*?]?\d*\}/g)].map((m) => m[1]);

/**
 * Every parameter of the path template, whether the route validates it or not (a page reads its
 * own): OpenAPI requires each templated name declared, and required (OpenAPI 3.1, Path
 * Templating). Its schema is the route's `validate.params` entry, else any string. A validated
 * name the template lacks is listed too, so the document's validators name that route's mistake.
 */
function pathParameters(path: string, schema: unknown, ctx: OperationContext): Json[] {
  const { properties } = propertiesOf(schema, ctx);
  const names = new Set([...templateParameters(path), ...Object.keys(properties)]);
  return [...names].map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: properties[name] ?? { type: 'string' },
  }));
}

function successResponse(answer: RouteResponse, ctx: OperationContext): Json {
  switch (answer.kind) {
    case 'envelope':
      return {
        description: answer.description ?? 'Success, in the envelope',
        content: {
          [JSON_TYPE]: {
            schema: successEnvelope(
              toJsonSchema(answer.data, ctx.shared),
              answer.meta && toJsonSchema(answer.meta, ctx.shared),
            ),
          },
        },
      };
    case 'json':
      return {
        description: answer.description,
        content: {
          [answer.type ?? JSON_TYPE]: { schema: toJsonSchema(answer.body, ctx.shared) },
          ...Object.fromEntries((answer.otherTypes ?? []).map((type) => [type, { schema: { type: 'string' } }])),
        },
      };
    case 'content':
      return { description: answer.description, content: { [answer.type]: { schema: { type: 'string' } } } };
    case 'redirect':
      return { description: answer.description, headers: { Location: { schema: { type: 'string' } } } };
    case 'empty':
      return { description: answer.description };
  }
}

/**
 * Every error code the route can answer, by status: what the kernel derives from the route
 * (auth, validation, bodies, rate limit, the 500) and what the route declares of its service.
 */
function errorCodes(route: RequestRoute, auth: RouteAuth, config: GantryRouteConfig): Map<number, Set<string>> {
  const byStatus = new Map<number, Set<string>>();
  const add = (code: ErrorCode, status: number = ErrorCodes[code]) => {
    if (!byStatus.has(status)) byStatus.set(status, new Set());
    byStatus.get(status)?.add(code);
  };
  const validate = route.settings.validate ?? {};
  if (auth) {
    add('UNAUTHORIZED');
    if (auth.strategies.includes('bearer')) {
      add('INSUFFICIENT_SCOPE');
      if (!config.apiKeys) add('FORBIDDEN');
    }
  }
  if (validate.query || validate.headers) add('VALIDATION_FAILED');
  if (validate.params) add('VALIDATION_FAILED', config.invalidParamsStatus ?? 422);
  if (validate.payload || config.requestBody || BODY_METHODS.has(route.method)) {
    add('VALIDATION_FAILED');
    add('PAYLOAD_TOO_LARGE');
    add('UNSUPPORTED_MEDIA_TYPE');
  }
  if (config.rateLimit !== false) add('RATE_LIMIT_EXCEEDED');
  for (const entry of config.errors ?? []) {
    if (typeof entry === 'string') add(entry);
    else add(entry[0], entry[1]);
  }
  // Any route may open a sealed value, and a node a key rotation has not reached answers 503
  // (src/http/responses.ts; docs/postgres.md, Secrets): the kernel declares it everywhere.
  add('NOT_CONFIGURED');
  add('INTERNAL');
  return byStatus;
}

function errorResponses(route: RequestRoute, auth: RouteAuth, config: GantryRouteConfig, ctx: OperationContext) {
  const responses: Record<string, Json> = {};
  // A route that writes its errors in its own format (a page, an RFC body) says which by example.
  const sample = config.errorFormat?.(
    { status: 400, code: 'VALIDATION_FAILED', message: 'sample', requestId: 'sample', homePath: '/' },
    ctx.pages,
  );
  for (const [status, codes] of [...errorCodes(route, auth, config)].sort(([a], [b]) => a - b)) {
    const list = [...codes].sort();
    let schemaContent: Json;
    if (!sample) schemaContent = { [JSON_TYPE]: { schema: errorEnvelopeWith(list) } };
    else if (sample.type && !sample.type.includes('json'))
      schemaContent = { [sample.type.split(';')[0]]: { schema: { type: 'string' } } };
    else
      schemaContent = {
        [sample.type?.split(';')[0] ?? JSON_TYPE]: {
          schema: config.errorSchema ? toJsonSchema(config.errorSchema, ctx.shared) : { type: 'object' },
        },
      };
    responses[String(status)] = { description: list.join(', '), content: schemaContent };
  }
  return responses;
}

/** One operation of the document from one route of the table (docs/openapi.md). */
export function operationOf(route: RequestRoute, auth: RouteAuth, ctx: OperationContext): Json {
  const settings = route.settings;
  const config = ((settings.plugins as Record<string, unknown> | undefined)?.gantry ?? {}) as GantryRouteConfig;
  const validate = settings.validate ?? {};
  const id = settings.id;
  const operation: Json = {
    ...(id ? { operationId: id, tags: [id.split('.')[0]] } : { tags: ['other'] }),
    ...(settings.description ? { summary: settings.description } : {}),
    ...(settings.notes ? { description: [settings.notes].flat().join('\n') } : {}),
  };
  const security = auth ? auth.strategies.flatMap((strategy) => ctx.security(strategy, config)) : [];
  operation.security = auth && auth.mode === 'optional' ? [...security, {}] : security;
  const params = [
    ...pathParameters(route.path, validate.params, ctx),
    ...parameters('query', validate.query, ctx),
    ...parameters('header', validate.headers, ctx),
  ];
  if (params.length > 0) operation.parameters = params;
  // The body's media types: the route's payload.allow (a form post), else JSON.
  const allow = (settings.payload as { allow?: string | string[] } | undefined)?.allow;
  const bodyTypes = allow ? [allow].flat() : [JSON_TYPE];
  if (Joi.isSchema(validate.payload)) {
    const schema = toJsonSchema(validate.payload as Schema, ctx.shared);
    operation.requestBody = { required: true, content: Object.fromEntries(bodyTypes.map((t) => [t, { schema }])) };
  } else if (allow && !config.requestBody)
    operation.requestBody = { content: Object.fromEntries(bodyTypes.map((t) => [t, { schema: { type: 'object' } }])) };
  else if (config.requestBody)
    operation.requestBody = {
      required: true,
      content: {
        [config.requestBody.type]: {
          schema: config.requestBody.schema ? toJsonSchema(config.requestBody.schema, ctx.shared) : { type: 'object' },
        },
      },
    };
  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(config.responses ?? {}))
    responses[status] = successResponse(answer, ctx);
  if (!config.responses) responses.default = { description: 'Not declared by the route (docs/openapi.md)' };
  // A status the route declares itself (an RFC's error body) is not overwritten by the derived one.
  for (const [status, answer] of Object.entries(errorResponses(route, auth, config, ctx))) responses[status] ??= answer;
  operation.responses = responses;
  const rule = config.rateLimit === false ? false : (config.rateLimit ?? ctx.defaultRateLimit);
  operation['x-rateLimit'] = rule
    ? { limit: ctx.effectiveLimit(rule), windowSeconds: rule.windowSec, per: 'user, or client address when anonymous' }
    : false;
  return operation;
}
