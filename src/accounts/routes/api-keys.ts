import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../http/plugin.js';
import { reply } from '../../http/envelope.js';
import { ANY_MEMBER } from '../roles.js';
import { apiKeyBody, id } from '../schemas.js';
import { accountParams, p, withKeys, type Guard } from './guard.js';

/** Enterprise API keys (issued with a session only: a key cannot mint keys). */
export function apiKeyRoutes(app: PluginDeps, guard: Guard): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'POST',
      path: '/accounts/{accountId}/api-keys',
      options: { id: 'accounts.api-keys.create', validate: { params: accountParams, payload: apiKeyBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(
          request,
          h,
          await accounts.apiKeys.create(p(request).accountId, actor.userId, (request.payload as { name: string }).name),
          { status: 201 },
        );
      },
    },
    {
      method: 'GET',
      path: '/accounts/{accountId}/api-keys',
      options: { id: 'accounts.api-keys.list', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        const { principal, context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(
          request,
          h,
          await accounts.apiKeys.list(context.accountId, { userId: principal.userId, role: context.role }),
        );
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/api-keys/{keyId}',
      options: {
        id: 'accounts.api-keys.revoke',
        plugins: withKeys,
        validate: { params: Joi.object({ accountId: id, keyId: id }) },
      },
      handler: async (request, h) => {
        const { actor, context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(
          request,
          h,
          await accounts.apiKeys.revoke(context.accountId, actor, context.role, p(request).keyId),
        );
      },
    },
  ];
}
