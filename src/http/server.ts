import Hapi, { type Server, type ServerRoute } from '@hapi/hapi';
import type { AppContext } from '../app.js';
import { registerBearerAuth } from './auth.js';
import { registerClientAddress } from './client-address.js';
import { registerHealth } from './health.js';
import { registerRateLimits } from './rate-limit.js';
import { registerPayloadDepth } from './payload-depth.js';
import { registerResponses, validationFailAction } from './responses.js';
import { identityRoutes } from '../identity/routes.js';
import { walletRoutes } from '../wallet/routes.js';
import { accountsRoutes } from '../accounts/routes.js';
import { statusRoutes } from '../status/routes.js';
import { notificationsRoutes } from '../notifications/routes.js';
import { oauthRoutes } from '../oauth/routes.js';
import { connectorRoutes } from '../connectors/routes.js';
import { aiRoutes } from '../ai/routes.js';

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
    // The peer address is read when the request arrives: a socket that closes before the
    // response (a stream ended by the client) has none left to read for the log line.
    info: { remote: true },
    routes: {
      validate: { failAction: validationFailAction, options: { abortEarly: false } },
      payload: { maxBytes: 1024 * 1024, failAction: 'error' },
      // No range requests on an API (no Accept-Ranges header); the legacy X-XSS-Protection and
      // X-Download-Options headers are left out: every byte of headers is paid on every response.
      response: { emptyStatusCode: 204, ranges: false },
      security: { noSniff: true, referrer: 'no-referrer', hsts: false, xframe: 'deny', xss: false, noOpen: false },
    },
    debug: false,
  });
  registerClientAddress(server, kernel.config.trustedProxies);
  registerResponses(server, kernel.logger, kernel.clock);
  registerBearerAuth(server, [services.identity.sessionVerifier, services.oauth.accessTokenVerifier, services.accounts.apiKeyVerifier]);
  registerRateLimits(server, kernel.limiter, kernel.clock);
  registerPayloadDepth(server);
  registerHealth(server, kernel.db, () => app.draining);

  const routes: ServerRoute[] = options.statusOnly
    ? [...statusRoutes(app)]
    : [
        ...identityRoutes(app),
        ...walletRoutes(app),
        ...accountsRoutes(app),
        ...statusRoutes(app),
        ...notificationsRoutes(app),
        ...oauthRoutes(app),
        ...connectorRoutes(app),
        ...aiRoutes(app),
      ];
  server.route(routes);
  return server;
}
