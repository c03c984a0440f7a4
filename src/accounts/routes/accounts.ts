import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../http/plugin.js';
import { reply } from '../../http/envelope.js';
import { principalOf } from '../../http/auth.js';
import { cursorQuery } from '../../http/pagination.js';
import { tenancyHeaders } from '../access.js';
import { ANY_MEMBER, OWNER, OWNER_OR_ADMIN } from '../roles.js';
import { createAccountBody, updateAccountBody } from '../schemas.js';
import { accountParams, p, withKeys, type Guard } from './guard.js';

/** Accounts: the current one, create, read, update, delete. */
export function accountRoutes(app: PluginDeps, guard: Guard): ServerRoute[] {
  const { accounts } = app.services;
  const { access } = accounts;
  return [
    {
      method: 'GET',
      path: '/accounts/me',
      options: { id: 'accounts.me', plugins: withKeys },
      handler: async (request, h) => {
        const context = await access.current(
          principalOf(request),
          tenancyHeaders(request.headers as Record<string, string | undefined>).accountId,
        );
        return reply(request, h, await accounts.get(context.accountId));
      },
    },
    {
      method: 'POST',
      path: '/accounts',
      options: { id: 'accounts.create', validate: { payload: createAccountBody } },
      handler: async (request, h) =>
        reply(request, h, await accounts.create(principalOf(request).userId, request.payload as never), {
          status: 201,
        }),
    },
    {
      method: 'GET',
      path: '/accounts/{accountId}',
      options: { id: 'accounts.get', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        const { context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.summary(context.accountId, context.role));
      },
    },
    {
      method: 'PATCH',
      path: '/accounts/{accountId}',
      options: {
        id: 'accounts.update',
        plugins: withKeys,
        validate: { params: accountParams, payload: updateAccountBody },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.update(p(request).accountId, actor, request.payload as never));
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}',
      options: { id: 'accounts.delete', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER);
        const { id: accountId, deletedAt } = await accounts.deletion.softDelete(p(request).accountId, actor);
        return reply(request, h, { id: accountId, deletedAt });
      },
    },
  ];
}

/** The account's audit log. */
export function auditLogRoutes(app: PluginDeps, guard: Guard): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'GET',
      path: '/accounts/{accountId}/logs',
      options: {
        id: 'accounts.logs',
        plugins: withKeys,
        validate: { params: accountParams, query: Joi.object(cursorQuery({ max: 100, defaultLimit: 20 })) },
      },
      handler: async (request, h) => {
        await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        const { items, meta } = await accounts.logs(
          p(request).accountId,
          request.query as { limit: number; cursor?: string },
        );
        return reply(request, h, items, { meta });
      },
    },
  ];
}
