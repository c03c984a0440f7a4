import type { Request } from '@hapi/hapi';
import type { PageKit } from './pages.js';

export interface RateLimitRule {
  limit: number;
  windowSec: number;
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
 *   the malformed-id answer of docs/interface.md, Errors; 400 where the path carries a value, not an id).
 */
export interface GantryRouteConfig {
  scope?: string;
  apiKeys?: boolean;
  rateLimit?: RateLimitRule | false;
  errorFormat?: RouteErrorFormat;
  invalidParamsStatus?: 400 | 404 | 422;
}

/** An error as the kernel mapped it (status, code, safe message). */
interface RouteError {
  status: number;
  code: string;
  message: string;
  details?: unknown;
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
