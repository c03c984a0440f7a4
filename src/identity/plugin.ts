import type { DomainPlugin } from '../services.js';
import { identityRoutes } from './routes.js';
import { profileRoutes } from './profile-routes.js';
import { identityPages } from './pages.js';
import { homePageRoutes } from './home-page.js';
import { factorRoutes } from './factor-routes.js';
import { passkeyRoutes } from './passkey-routes.js';
import { factorPages } from './factor-pages.js';
import { accountPages } from './account-pages.js';

/** The sign-in API (under the API prefix). */
export const identityPlugin: DomainPlugin = {
  name: 'identity',
  register: (server, deps) =>
    server.route([...identityRoutes(deps), ...profileRoutes(deps), ...factorRoutes(deps), ...passkeyRoutes(deps)]),
};

/** The home page, the email confirmation and password reset pages, the second step, passkeys and the account center (at the root). */
export const identityPagesPlugin: DomainPlugin = {
  name: 'identity-pages',
  register: (server, deps) =>
    server.route([...homePageRoutes(deps), ...identityPages(deps), ...factorPages(deps), ...accountPages(deps)]),
};
