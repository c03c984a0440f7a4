import type { RequestRoute, Server } from '@hapi/hapi';
import type { GantryRouteConfig, RateLimitRule } from '../route-config.js';
import type { PageKit } from '../page-kit.js';
import { operationOf, type OperationContext, type RouteAuth } from './operation.js';
import { ERROR_ENVELOPE } from './schemas.js';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  title: string;
  version: string;
  /** The public base URL; paths in the document are absolute from it (they carry /api/v1). */
  serverUrl: string;
  /** The OAuth 2.0 authorization code flow third-party tokens come from, and its scopes. */
  oauth: { authorizationUrl: string; tokenUrl: string; refreshUrl: string; scopes: Record<string, string> };
  /** Security schemes of auth strategies other than the kernel's `bearer` (a domain's own). */
  strategies: Record<string, Json>;
  effectiveLimit(rule: RateLimitRule): number;
  defaultRateLimit: RateLimitRule;
  /** What the pages' error format writes with (the document shows its content type). */
  pages: PageKit;
}

// The methods a `*` route is documented under: those an API route answers with a body or a stream.
const ANY_METHOD = ['get', 'post', 'delete'];

/**
 * The kernel's bearer strategy (docs/interface.md, Authentication): a first-party session JWT
 * always passes; a third-party OAuth token only with the route's scope; an API key only where
 * the route accepts keys.
 */
function bearerSecurity(config: GantryRouteConfig): Json[] {
  return [
    { session: [] },
    ...(config.scope ? [{ oauth2: [config.scope] }] : []),
    ...(config.apiKeys ? [{ apiKey: [] }] : []),
  ];
}

function securitySchemes(options: OpenApiOptions): Json {
  return {
    session: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'A first-party session access token from POST /api/v1/auth/login; reaches every bearer route.',
    },
    oauth2: {
      type: 'oauth2',
      description:
        'An access token issued to a third-party client (authorization code with PKCE S256); reaches only the routes its scopes grant.',
      flows: {
        authorizationCode: {
          authorizationUrl: options.oauth.authorizationUrl,
          tokenUrl: options.oauth.tokenUrl,
          refreshUrl: options.oauth.refreshUrl,
          scopes: options.oauth.scopes,
        },
      },
    },
    apiKey: {
      type: 'http',
      scheme: 'bearer',
      description: "An account's enterprise API key, sent as a bearer token; only on routes that accept keys.",
    },
    ...options.strategies,
  };
}

/** hapi's path template as OpenAPI's: `{p*}` and `{p?}` become `{p}`. */
const openApiPath = (path: string) => path.replace(/\{(\w+)[*?]\d*\}/g, '{$1}');

/** What the document is built from: the route table and default auth once the plugins are registered. */
export interface RouteTable {
  routes: RequestRoute[];
  defaultAuth: { strategies: string[]; mode: string } | null;
}

export function routeTableOf(server: Server): RouteTable {
  return {
    routes: [...server.table()],
    defaultAuth: server.auth.settings.default as { strategies: string[]; mode: string } | null,
  };
}

/**
 * The OpenAPI 3.1 document of every route in the table (docs/openapi.md), built from the
 * routes' own validation schemas and declarations so that it cannot drift from them.
 */
export function buildOpenApiDocument({ routes: table, defaultAuth }: RouteTable, options: OpenApiOptions): Json {
  const shared: Record<string, Json> = {};
  const ctx: OperationContext = {
    shared,
    effectiveLimit: options.effectiveLimit,
    defaultRateLimit: options.defaultRateLimit,
    pages: options.pages,
    security: (strategy, config) =>
      strategy === 'bearer' ? bearerSecurity(config) : options.strategies[strategy] ? [{ [strategy]: [] }] : [],
  };
  const paths: Record<string, Record<string, Json>> = {};
  const routes = [...table].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of routes) {
    const own = route.settings.auth as unknown as false | { strategies?: string[]; mode?: string } | undefined;
    const auth: RouteAuth =
      own === false
        ? false
        : {
            strategies: own?.strategies ?? defaultAuth?.strategies ?? [],
            mode: own?.mode ?? defaultAuth?.mode ?? 'required',
          };
    const path = openApiPath(route.path);
    paths[path] ??= {};
    const operation = operationOf(route, auth, ctx);
    if (route.method === '*') {
      for (const method of ANY_METHOD)
        paths[path][method] = { ...operation, operationId: `${String(operation.operationId)}.${method}` };
    } else paths[path][route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version },
    servers: [{ url: options.serverUrl }],
    paths,
    components: {
      schemas: { ErrorEnvelope: ERROR_ENVELOPE, ...shared },
      securitySchemes: securitySchemes(options),
    },
  };
}
