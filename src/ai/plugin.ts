import type { DomainPlugin } from '../services.js';
import { aiRoutes } from './routes.js';

export const aiPlugin: DomainPlugin = {
  name: 'ai',
  register: (server, deps) => server.route(aiRoutes(deps)),
};
