import Hapi, { type Server, type ServerRoute } from '@hapi/hapi';
import type { AppContext } from '../app.js';
import { registerBearerAuth } from './auth.js';
import { registerHealth } from './health.js';
import { registerRateLimits } from './rate-limit.js';
import { registerResponses, validationFailAction } from './responses.js';
import { identityRoutes } from '../identity/routes.js';
import { walletRoutes } from '../wallet/routes.js';
import { aiRoutes } from '../ai/routes.js';

/** Every versioned JSON endpoint lives under this prefix; discovery and pages live at the root. */
export const API = '/api/v1';

export interface ServerOptions {
  port?: number;
  host?: string;
  /** The second listener (GANTRY_STATUS_PORT): only the status service and its page. */
  statusOnly?: boolean;
}

/**
 * Builds a configured hapi server: kernel conventions first, then each domain's routes.
 * It never listens by itself: `serve` starts it, tests initialize() and inject().
 */
export async function createServer(app: AppContext, options: ServerOptions = {}): Promise<Server> {
  const { kernel, services } = app;
  const server = Hapi.server({
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    router: { stripTrailingSlash: true },
    routes: {
      validate: { failAction: validationFailAction, options: { abortEarly: false } },
      payload: { maxBytes: 1024 * 1024, failAction: 'error' },
      response: { emptyStatusCode: 204 },
      security: { noSniff: true, referrer: 'no-referrer', hsts: false, xframe: 'deny' },
    },
    debug: false,
  });
  registerResponses(server, kernel.logger, kernel.clock);
  registerBearerAuth(server, [services.identity.sessionVerifier]);
  registerRateLimits(server, kernel.limiter, kernel.clock);
  registerHealth(server, kernel.db, () => app.draining);

  const routes: ServerRoute[] = options.statusOnly ? [] : [...identityRoutes(app), ...walletRoutes(app), ...aiRoutes(app)];
  server.route(routes);
  return server;
}
