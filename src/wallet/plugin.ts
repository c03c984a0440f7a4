import type { DomainPlugin } from '../http/plugin.js';
import { walletRoutes } from './routes.js';

export const walletPlugin: DomainPlugin = {
  name: 'wallet',
  register: (server, deps) => server.route(walletRoutes(deps)),
};
