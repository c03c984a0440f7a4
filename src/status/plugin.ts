import type { DomainPlugin } from '../services.js';
import { servePrepared } from '../http/prepared.js';
import { preparedResponse } from './http-cache.js';
import { statusRoutes } from './routes.js';
import { statusPageRoutes } from './page-routes.js';
import { subscriptionPageRoutes } from './subscription-pages.js';

/** The public status service (under the API prefix). */
export const statusPlugin: DomainPlugin = {
  name: 'status',
  register(server, deps) {
    // A server answers status requests: keep the projection built ahead of them from now on.
    deps.services.status.projection.activate();
    // ...and tell subscribers as changes come (docs/status.md, Subscriptions)...
    deps.services.status.activateSubscriptions();
    // ...and stop both when it stops, before the database closes (they would query a closed pool).
    server.ext('onPostStop', async () => {
      await deps.services.status.projection.deactivate();
      await deps.services.status.deactivateSubscriptions();
    });
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

/** The status pages, their feed and the subscription pages (at the root). */
export const statusPagesPlugin: DomainPlugin = {
  name: 'status-pages',
  register: (server, deps) => server.route([...statusPageRoutes(deps), ...subscriptionPageRoutes(deps)]),
};
