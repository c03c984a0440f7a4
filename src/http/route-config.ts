import type { Request } from '@hapi/hapi';
import type { Schema } from 'joi';
import type { ErrorCode } from './errors.js';
import type { PageKit } from './page-kit.js';

export interface RateLimitRule {
  limit: number;
  windowSec: number;
  /**
   * A security limit (sign-in, codes, the token endpoint, AI runs, tool calls): exact across
   * the nodes of a PostgreSQL cluster, counted in the database; other limits count per node
   * (docs/postgres.md, Rate limits).
   */
  acrossNodes?: boolean;
}

/**
 * What a route declares to the kernel, under `options.plugins.gantry`:
 * - scope: the OAuth scope a third-party access token needs here (without it, such tokens get
 *   403 INSUFFICIENT_SCOPE; first-party session tokens always pass);
 * - apiKeys: whether enterprise API keys are accepted (account endpoints);
 * - rateLimit: this endpoint's limit (default 120 per 60 s), or false for none (health probes);
 * - errorFormat: how this route's errors are written when not in the envelope (the OAuth
 *   token and revoke endpoints answer RFC 6749 bodies; HTML pages answer a page). Without it,
 *   every error is the envelope;
 * - invalidParamsStatus: the status of a path-parameter validation failure (default 422,
 *   the malformed-id answer of docs/interface.md, Errors; 400 where the path carries a value, not an id);
 * - responses: what the route answers on success, by status (src/http/openapi/declare.ts builds
 *   them); the OpenAPI document and the tests' response checks read it (docs/openapi.md);
 * - errors: the codes the route's service can throw, beyond the ones the kernel derives from
 *   the route itself (auth, validation, body, rate limit, internal); a code thrown with its
 *   second status (errors.ts, StatusExceptions) is given as [code, status];
 * - errorSchema: the body of the route's errors when errorFormat writes JSON of its own;
 * - requestBody: a body the route reads itself instead of through validate.payload (a form).
 */
export interface GantryRouteConfig {
  scope?: string;
  apiKeys?: boolean;
  rateLimit?: RateLimitRule | false;
  errorFormat?: RouteErrorFormat;
  invalidParamsStatus?: 400 | 404 | 422;
  responses?: Readonly<Record<number, RouteResponse>>;
  errors?: readonly (ErrorCode | readonly [ErrorCode, number])[];
  errorSchema?: Schema;
  requestBody?: { type: string; schema?: Schema };
}

/**
 * One documented answer (docs/openapi.md): the envelope around `data` (meta adds to requestId
 * and durationMs), a JSON body of another form (a protocol's own), another content type (a page,
 * an event stream), a redirect, or no body.
 */
export type RouteResponse =
  | { kind: 'envelope'; data: Schema; meta?: Schema; description?: string }
  | { kind: 'json'; body: Schema; type?: string; description: string; otherTypes?: readonly string[] }
  | { kind: 'content'; type: string; description: string }
  | { kind: 'redirect'; description: string }
  | { kind: 'empty'; description: string };

/** An error as the kernel mapped it (status, code, safe message), with what a page says of it. */
interface RouteError {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  /** The request's id, for a person to quote (docs/kernel.md, Pages). */
  requestId: string;
  /** A refusal's Retry-After, in seconds. */
  retryAfterSec?: number;
  /** Where a page leads back to: the listener's home page (docs/kernel.md, Pages). */
  homePath: string;
}

/** A route's own error wire format: the body, its content type, extra headers. */
export type RouteErrorFormat = (
  error: RouteError,
  pages: PageKit,
) => {
  body: string | object;
  type?: string;
  headers?: Readonly<Record<string, string>>;
};

export function routeConfig(request: Request): GantryRouteConfig {
  return (
    ((request.route.settings.plugins as Record<string, unknown> | undefined)?.gantry as
      | GantryRouteConfig
      | undefined) ?? {}
  );
}

/** A stable name for the route: its id, else method and path. */
export function routeName(request: Request): string {
  return request.route.settings.id ?? `${request.route.method.toUpperCase()} ${request.route.path}`;
}
