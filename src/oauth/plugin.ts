import type { DomainPlugin } from '../services.js';
import { oauthRootRoutes, oauthRoutes, serveTokenDirectly } from './routes.js';

export const oauthPlugin: DomainPlugin = {
  name: 'oauth',
  register(server, deps) {
    server.route(oauthRoutes(deps));
    serveTokenDirectly(server, deps);
  },
};

/** The authorization and magic-link pages (absolute paths) and the discovery documents. */
export const oauthPagesPlugin: DomainPlugin = {
  name: 'oauth-pages',
  register: (server, deps) => server.route(oauthRootRoutes(deps)),
};
