import type { DomainPlugin } from '../services.js';
import { servePrepared } from '../http/prepared.js';
import { preparedResponse } from './http-cache.js';
import { statusPageRoutes, statusRoutes } from './routes.js';

/** The public status service (under the API prefix). */
export const statusPlugin: DomainPlugin = {
  name: 'status',
  register(server, deps) {
    // A server answers status requests: keep the projection built ahead of them from now on.
    deps.services.status.projection.activate();
    // ...and stop when it stops, before the database closes (its rebuilds would query a closed pool).
    server.ext('onPostStop', () => deps.services.status.projection.deactivate());
    server.route(statusRoutes(deps));
    // The summary, the most polled answer, is sent from memory once prepared (and while
    // current); the route builds it and answers everything else (docs/status.md, Projections and caching).
    const { projection } = deps.services.status;
    const { clock } = deps.kernel;
    servePrepared(server, '/status', 'status.summary', (headers) => {
      const rep = projection.prepared('summary');
      return rep ? preparedResponse(headers, rep, clock.now().getTime()) : undefined;
    });
  },
};

/** The status page and its feed (at the root). */
export const statusPagesPlugin: DomainPlugin = {
  name: 'status-pages',
  register: (server, deps) => server.route(statusPageRoutes(deps)),
};
