import type { DomainPlugin } from '../services.js';
import { billingRoutes } from './routes.js';

/** Wallet top-ups and the payment provider's webhook (under the API prefix). */
export const billingPlugin: DomainPlugin = {
  name: 'billing',
  register: (server, deps) => server.route(billingRoutes(deps)),
};
