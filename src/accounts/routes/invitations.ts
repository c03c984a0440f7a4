import { responses as R } from '../schemas.js';
import { ACCOUNT_ERRORS } from './options.js';
import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../services.js';
import { reply } from '../../http/envelope.js';
import { principalOf } from '../../http/auth.js';
import { offsetMeta, offsetQuery } from '../../http/pagination.js';
import { id, inviteBody, tokenBody } from '../schemas.js';
import { accountParams, p, withKeys } from './options.js';

/** Email invitations; the accept link's page is in pages.ts. */
export function invitationRoutes(app: PluginDeps): ServerRoute[] {
  const { invitations } = app.services.accounts;
  return [
    {
      method: 'POST',
      path: '/accounts/{accountId}/invitations',
      options: {
        id: 'accounts.invitations.create',
        plugins: withKeys({ responses: R.invitationCreated, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams, payload: inviteBody },
      },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await invitations.create(principalOf(request), p(request).accountId, request.payload as never),
          { status: 201 },
        ),
    },
    {
      method: 'GET',
      path: '/accounts/{accountId}/invitations',
      options: {
        id: 'accounts.invitations.list',
        plugins: withKeys({ responses: R.invitations, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams, query: Joi.object(offsetQuery()) },
      },
      handler: async (request, h) => {
        const { limit, offset } = request.query as { limit: number; offset: number };
        const { items, total } = await invitations.list(principalOf(request), p(request).accountId, limit, offset);
        return reply(request, h, items, { meta: { ...offsetMeta(total, limit, offset) } });
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/invitations/{invitationId}',
      options: {
        id: 'accounts.invitations.revoke',
        plugins: withKeys({ responses: R.invitation, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, invitationId: id }) },
      },
      handler: async (request, h) => {
        const { accountId, invitationId } = p(request);
        return reply(request, h, await invitations.revoke(principalOf(request), accountId, invitationId));
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/invitations/{invitationId}/resend',
      options: {
        id: 'accounts.invitations.resend',
        plugins: withKeys({ responses: R.invitation, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, invitationId: id }) },
      },
      handler: async (request, h) => {
        const { accountId, invitationId } = p(request);
        return reply(request, h, await invitations.resend(principalOf(request), accountId, invitationId));
      },
    },
    {
      method: 'POST',
      path: '/invitations/accept',
      options: {
        id: 'invitations.accept',
        plugins: { gantry: { responses: R.invitationAccepted, errors: [...ACCOUNT_ERRORS, 'GONE', 'UNAUTHORIZED'] } },
        validate: { payload: tokenBody },
      },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await invitations.accept(principalOf(request).userId, (request.payload as { token: string }).token),
        ),
    },
  ];
}
