import type { DomainPlugin } from '../services.js';
import { identityRoutes } from './routes.js';
import { profileRoutes } from './profile-routes.js';
import { identityPages } from './pages.js';
import { homePageRoutes } from './home-page.js';

/** The sign-in API (under the API prefix). */
export const identityPlugin: DomainPlugin = {
  name: 'identity',
  register: (server, deps) => server.route([...identityRoutes(deps), ...profileRoutes(deps)]),
};

/** The home page, the email confirmation and password reset pages (at the root). */
export const identityPagesPlugin: DomainPlugin = {
  name: 'identity-pages',
  register: (server, deps) => server.route([...homePageRoutes(deps), ...identityPages(deps)]),
};
