import type { DomainPlugin } from '../services.js';
import { ssoRoutes } from './sso-routes.js';

/** SSO sign-in through the operator's identity providers (at the root: /auth/sso/...). */
export const idpPagesPlugin: DomainPlugin = {
  name: 'idp-pages',
  register: (server, deps) => server.route(ssoRoutes(deps)),
};
