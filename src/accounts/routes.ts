import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { accountRoutes, auditLogRoutes } from './routes/accounts.js';
import { memberRoutes } from './routes/members.js';
import { invitationRoutes } from './routes/invitations.js';
import { workspaceRoutes } from './routes/workspaces.js';
import { ownershipRoutes } from './routes/ownership.js';
import { apiKeyRoutes } from './routes/api-keys.js';

/**
 * Every route of the accounts domain, one file per concept under routes/. Each passes the
 * request's principal to the use case, which checks the caller's role first (access.authorize).
 */
export function accountsRoutes(app: PluginDeps): ServerRoute[] {
  return [
    ...accountRoutes(app),
    ...memberRoutes(app),
    ...auditLogRoutes(app),
    ...invitationRoutes(app),
    ...workspaceRoutes(app),
    ...ownershipRoutes(app),
    ...apiKeyRoutes(app),
  ];
}
