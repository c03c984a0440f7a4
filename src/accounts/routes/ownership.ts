import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../http/plugin.js';
import { reply } from '../../http/envelope.js';
import { ANY_MEMBER, OWNER } from '../roles.js';
import { transferBody } from '../schemas.js';
import { accountParams, p, withKeys, type Guard } from './guard.js';

/** Ownership transfer. */
export function ownershipRoutes(app: PluginDeps, guard: Guard): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'GET',
      path: '/accounts/{accountId}/ownership-transfer',
      options: { id: 'accounts.ownership.get', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.ownership.current(p(request).accountId));
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/ownership-transfer',
      options: { id: 'accounts.ownership.propose', validate: { params: accountParams, payload: transferBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER);
        return reply(
          request,
          h,
          await accounts.ownership.propose(
            p(request).accountId,
            actor.userId,
            (request.payload as { chainerId: string }).chainerId,
          ),
          { status: 201 },
        );
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/ownership-transfer/accept',
      options: { id: 'accounts.ownership.accept', validate: { params: accountParams } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.ownership.accept(p(request).accountId, actor.userId));
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/ownership-transfer',
      options: { id: 'accounts.ownership.cancel', validate: { params: accountParams } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.ownership.cancel(p(request).accountId, actor.userId));
      },
    },
  ];
}
