import type { DomainPlugin } from '../services.js';
import { approvalPageRoutes } from './approval-page.js';
import { linkPageRoutes } from './link-page.js';
import { connectorPageRoutes, connectorRoutes } from './routes.js';

export const connectorsPlugin: DomainPlugin = {
  name: 'connectors',
  register(server, deps) {
    server.route(connectorRoutes(deps));
    server.ext('onPreStop', () => deps.services.connectors.closeSessions());
  },
};

/** The connector settings page, the approval page and the page that finishes a held link (at the root). */
export const connectorsPagesPlugin: DomainPlugin = {
  name: 'connectors-pages',
  register: (server, deps) =>
    server.route([
      ...connectorPageRoutes(deps.kernel.config.brand.name),
      ...approvalPageRoutes(deps),
      ...linkPageRoutes(deps),
    ]),
};
