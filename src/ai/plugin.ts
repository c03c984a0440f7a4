import type { DomainPlugin } from '../http/plugin.js';
import { aiRoutes } from './routes.js';

export const aiPlugin: DomainPlugin = {
  name: 'ai',
  register: (server, deps) => server.route(aiRoutes(deps)),
};
