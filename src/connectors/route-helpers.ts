import type { Request } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { principalOf } from '../http/auth.js';
import { tenancyHeaders } from '../accounts/access.js';
import type { GantryRouteConfig } from '../http/route-config.js';

/** What a workspace's connector routes can refuse (docs/connectors.md): role, suspension, unknown ids, state. */
export const CONNECTOR_ERRORS: GantryRouteConfig['errors'] = [
  'FORBIDDEN',
  'ACCOUNT_SUSPENDED',
  'NOT_FOUND',
  'CONFLICT',
];
/** Those that reach the connector's service or server too. */
export const UPSTREAM_ERRORS: GantryRouteConfig['errors'] = [...CONNECTOR_ERRORS, 'UPSTREAM_FAILED', 'NOT_CONFIGURED'];

/** What the connector routes read from a request: the workspace (tenancy headers), the actor, params, body. */
export function connectorRequests(app: PluginDeps) {
  const { accounts } = app.services;
  const ws = (request: Request) =>
    accounts.access.workspace(
      principalOf(request),
      tenancyHeaders(request.headers as Record<string, string | undefined>),
    );
  const actor = async (request: Request) => ({ principal: principalOf(request), ws: await ws(request) });
  const params = (request: Request) => request.params as Record<string, string>;
  const body = <T>(request: Request) => request.payload as T;
  return { ws, actor, params, body };
}
