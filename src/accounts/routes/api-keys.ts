import { responses as R } from '../schemas.js';
import { ACCOUNT_ERRORS } from './options.js';
import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../services.js';
import { reply } from '../../http/envelope.js';
import { principalOf } from '../../http/auth.js';
import { apiKeyBody, id } from '../schemas.js';
import { accountParams, p, withKeys } from './options.js';

/** Enterprise API keys (issued with a session only: a key cannot mint keys). */
export function apiKeyRoutes(app: PluginDeps): ServerRoute[] {
  const { apiKeys } = app.services.accounts;
  return [
    {
      method: 'POST',
      path: '/accounts/{accountId}/api-keys',
      options: {
        id: 'accounts.api-keys.create',
        plugins: { gantry: { responses: R.apiKeyCreated, errors: ACCOUNT_ERRORS } },
        validate: { params: accountParams, payload: apiKeyBody },
      },
      handler: async (request, h) => {
        const { name } = request.payload as { name: string };
        return reply(request, h, await apiKeys.create(principalOf(request), p(request).accountId, name), {
          status: 201,
        });
      },
    },
    {
      method: 'GET',
      path: '/accounts/{accountId}/api-keys',
      options: {
        id: 'accounts.api-keys.list',
        plugins: withKeys({ responses: R.apiKeys, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams },
      },
      handler: async (request, h) => reply(request, h, await apiKeys.list(principalOf(request), p(request).accountId)),
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/api-keys/{keyId}',
      options: {
        id: 'accounts.api-keys.revoke',
        plugins: withKeys({ responses: R.apiKey, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, keyId: id }) },
      },
      handler: async (request, h) => {
        const { accountId, keyId } = p(request);
        return reply(request, h, await apiKeys.revoke(principalOf(request), accountId, keyId));
      },
    },
  ];
}
