import { responses as R } from '../schemas.js';
import { ACCOUNT_ERRORS } from './options.js';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../services.js';
import { reply } from '../../http/envelope.js';
import { principalOf } from '../../http/auth.js';
import { transferBody } from '../schemas.js';
import { accountParams, p, withKeys } from './options.js';

/** Ownership transfer. */
export function ownershipRoutes(app: PluginDeps): ServerRoute[] {
  const { ownership } = app.services.accounts;
  return [
    {
      method: 'GET',
      path: '/accounts/{accountId}/ownership-transfer',
      options: {
        id: 'accounts.ownership.get',
        plugins: withKeys({ responses: R.transfer, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams },
      },
      handler: async (request, h) =>
        reply(request, h, await ownership.current(principalOf(request), p(request).accountId)),
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/ownership-transfer',
      options: {
        id: 'accounts.ownership.propose',
        plugins: { gantry: { responses: R.transferCreated, errors: ACCOUNT_ERRORS } },
        validate: { params: accountParams, payload: transferBody },
      },
      handler: async (request, h) => {
        const { chainerId } = request.payload as { chainerId: string };
        return reply(request, h, await ownership.propose(principalOf(request), p(request).accountId, chainerId), {
          status: 201,
        });
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/ownership-transfer/accept',
      options: {
        id: 'accounts.ownership.accept',
        plugins: { gantry: { responses: R.transfer, errors: ACCOUNT_ERRORS } },
        validate: { params: accountParams },
      },
      handler: async (request, h) =>
        reply(request, h, await ownership.accept(principalOf(request), p(request).accountId)),
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/ownership-transfer',
      options: {
        id: 'accounts.ownership.cancel',
        plugins: { gantry: { responses: R.transfer, errors: ACCOUNT_ERRORS } },
        validate: { params: accountParams },
      },
      handler: async (request, h) =>
        reply(request, h, await ownership.cancel(principalOf(request), p(request).accountId)),
    },
  ];
}
