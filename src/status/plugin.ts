import type { DomainPlugin } from '../http/plugin.js';
import { statusPageRoutes, statusRoutes } from './routes.js';

/** The public status service (under the API prefix). */
export const statusPlugin: DomainPlugin = {
  name: 'status',
  register(server, deps) {
    // A server answers status requests: keep the projection built ahead of them from now on.
    deps.services.status.projection.activate();
    server.route(statusRoutes(deps));
  },
};

/** The status page and its feed (at the root). */
export const statusPagesPlugin: DomainPlugin = {
  name: 'status-pages',
  register: (server, deps) => server.route(statusPageRoutes(deps)),
};
