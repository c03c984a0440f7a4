import Joi from 'joi';
import type { Request } from '@hapi/hapi';
import type { PluginDeps } from '../../http/plugin.js';
import { principalOf } from '../../http/auth.js';
import { id } from '../schemas.js';
import type { Role } from '../roles.js';

/** Account routes accept enterprise API keys (acting as the key's owner). */
export const withKeys = { gantry: { apiKeys: true } };

export const accountParams = Joi.object({ accountId: id });
export const p = (request: Request) => request.params as Record<string, string>;

/**
 * The role guard of every /accounts/{accountId}/... route: the caller's membership in the
 * path's account with one of the roles; 403 otherwise (404 when the account is gone).
 */
export function makeGuard(app: PluginDeps) {
  const { access } = app.services.accounts;
  return async function guard(request: Request, accountId: string, roles: readonly Role[]) {
    const principal = principalOf(request);
    const context = await access.inAccount(principal, accountId);
    access.requireRole(context, roles);
    return { principal, context, actor: { userId: principal.userId } };
  };
}

export type Guard = ReturnType<typeof makeGuard>;
