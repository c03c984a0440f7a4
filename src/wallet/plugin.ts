import type { DomainPlugin } from '../services.js';
import { walletRoutes } from './routes.js';

export const walletPlugin: DomainPlugin = {
  name: 'wallet',
  register: (server, deps) => server.route(walletRoutes(deps)),
};
