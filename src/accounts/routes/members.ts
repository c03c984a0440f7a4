import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../http/plugin.js';
import { reply } from '../../http/envelope.js';
import { offsetMeta, offsetQuery } from '../../http/pagination.js';
import { ANY_MEMBER, OWNER_OR_ADMIN } from '../roles.js';
import { addMemberBody, changeRoleBody, id, removeMemberQuery } from '../schemas.js';
import { accountParams, p, withKeys, type Guard } from './guard.js';

/** Members of an account. */
export function memberRoutes(app: PluginDeps, guard: Guard): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'GET',
      path: '/accounts/{accountId}/members',
      options: {
        id: 'accounts.members.list',
        plugins: withKeys,
        validate: { params: accountParams, query: Joi.object(offsetQuery({ max: 500 })) },
      },
      handler: async (request, h) => {
        await guard(request, p(request).accountId, ANY_MEMBER);
        const { limit, offset } = request.query as { limit: number; offset: number };
        const { items, total } = await accounts.members.list(p(request).accountId, limit, offset);
        return reply(request, h, items, { meta: { ...offsetMeta(total, limit, offset) } });
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/members',
      options: {
        id: 'accounts.members.add',
        plugins: withKeys,
        validate: { params: accountParams, payload: addMemberBody },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.members.add(p(request).accountId, actor, request.payload as never), {
          status: 201,
        });
      },
    },
    {
      method: 'PATCH',
      path: '/accounts/{accountId}/members/{chainerId}',
      options: {
        id: 'accounts.members.update',
        plugins: withKeys,
        validate: { params: Joi.object({ accountId: id, chainerId: id }), payload: changeRoleBody },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(
          request,
          h,
          await accounts.members.changeRole(
            p(request).accountId,
            actor,
            p(request).chainerId,
            (request.payload as { role: never }).role,
          ),
        );
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/members/{chainerId}',
      options: {
        id: 'accounts.members.remove',
        plugins: withKeys,
        validate: { params: Joi.object({ accountId: id, chainerId: id }), query: removeMemberQuery },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        const releaseSeat = (request.query as { releaseSeat: string }).releaseSeat === 'true';
        return reply(
          request,
          h,
          await accounts.members.remove(p(request).accountId, actor, p(request).chainerId, { releaseSeat }),
        );
      },
    },
  ];
}
