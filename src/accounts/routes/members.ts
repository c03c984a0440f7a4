import { responses as R } from '../schemas.js';
import { ACCOUNT_ERRORS } from './options.js';
import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../services.js';
import { reply } from '../../http/envelope.js';
import { principalOf } from '../../http/auth.js';
import { offsetMeta, offsetQuery } from '../../http/pagination.js';
import { addMemberBody, changeRoleBody, id, removeMemberQuery } from '../schemas.js';
import { accountParams, p, withKeys } from './options.js';

/** Members of an account. */
export function memberRoutes(app: PluginDeps): ServerRoute[] {
  const { members } = app.services.accounts;
  return [
    {
      method: 'GET',
      path: '/accounts/{accountId}/members',
      options: {
        id: 'accounts.members.list',
        plugins: withKeys({ responses: R.members, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams, query: Joi.object(offsetQuery({ max: 500 })) },
      },
      handler: async (request, h) => {
        const { limit, offset } = request.query as { limit: number; offset: number };
        const { items, total } = await members.list(principalOf(request), p(request).accountId, limit, offset);
        return reply(request, h, items, { meta: { ...offsetMeta(total, limit, offset) } });
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/members',
      options: {
        id: 'accounts.members.add',
        plugins: withKeys({ responses: R.memberAdded, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams, payload: addMemberBody },
      },
      handler: async (request, h) =>
        reply(request, h, await members.add(principalOf(request), p(request).accountId, request.payload as never), {
          status: 201,
        }),
    },
    {
      method: 'PATCH',
      path: '/accounts/{accountId}/members/{chainerId}',
      options: {
        id: 'accounts.members.update',
        plugins: withKeys({ responses: R.member, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, chainerId: id }), payload: changeRoleBody },
      },
      handler: async (request, h) => {
        const { accountId, chainerId } = p(request);
        const { role } = request.payload as { role: never };
        return reply(request, h, await members.changeRole(principalOf(request), accountId, chainerId, role));
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/members/{chainerId}',
      options: {
        id: 'accounts.members.remove',
        plugins: withKeys({ responses: R.memberRemoved, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, chainerId: id }), query: removeMemberQuery },
      },
      handler: async (request, h) => {
        const { accountId, chainerId } = p(request);
        const releaseSeat = (request.query as { releaseSeat: string }).releaseSeat === 'true';
        return reply(request, h, await members.remove(principalOf(request), accountId, chainerId, { releaseSeat }));
      },
    },
  ];
}
