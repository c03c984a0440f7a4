import type { DomainPlugin } from '../http/plugin.js';
import { connectorPageRoutes, connectorRoutes } from './routes.js';

export const connectorsPlugin: DomainPlugin = {
  name: 'connectors',
  register: (server, deps) => server.route(connectorRoutes(deps)),
};

/** The connector settings page (at the root). */
export const connectorsPagesPlugin: DomainPlugin = {
  name: 'connectors-pages',
  register: (server) => server.route(connectorPageRoutes()),
};
