import type { DomainPlugin } from '../services.js';
import { accountsRoutes } from './routes.js';
import { invitationPageRoutes } from './pages.js';

/** Accounts, members, invitations, workspaces, ownership, API keys and billing (under the API prefix). */
export const accountsPlugin: DomainPlugin = {
  name: 'accounts',
  register: (server, deps) => server.route(accountsRoutes(deps)),
};

/** The invitation page (at the root). */
export const accountsPagesPlugin: DomainPlugin = {
  name: 'accounts-pages',
  register: (server, deps) => server.route(invitationPageRoutes(deps)),
};
