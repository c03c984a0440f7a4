import { responses as R } from '../schemas.js';
import { ACCOUNT_ERRORS } from './options.js';
import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../services.js';
import { reply } from '../../http/envelope.js';
import { principalOf } from '../../http/auth.js';
import { cursorQuery } from '../../http/pagination.js';
import { tenancyHeaders } from '../access.js';
import { approvalSettingsBody, createAccountBody, updateAccountBody } from '../schemas.js';
import { accountParams, p, withKeys } from './options.js';

/** Accounts: the current one, create, read, update, delete. */
export function accountRoutes(app: PluginDeps): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'GET',
      path: '/accounts/me',
      options: { id: 'accounts.me', plugins: withKeys({ responses: R.account, errors: ACCOUNT_ERRORS }) },
      handler: async (request, h) => {
        const { accountId } = tenancyHeaders(request.headers as Record<string, string | undefined>);
        return reply(request, h, await accounts.current(principalOf(request), accountId));
      },
    },
    {
      method: 'POST',
      path: '/accounts',
      options: {
        id: 'accounts.create',
        plugins: { gantry: { responses: R.accountCreated, errors: ACCOUNT_ERRORS } },
        validate: { payload: createAccountBody },
      },
      handler: async (request, h) =>
        reply(request, h, await accounts.create(principalOf(request).userId, request.payload as never), {
          status: 201,
        }),
    },
    {
      method: 'GET',
      path: '/accounts/{accountId}',
      options: {
        id: 'accounts.get',
        plugins: withKeys({ responses: R.summary, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams },
      },
      handler: async (request, h) =>
        reply(request, h, await accounts.summary(principalOf(request), p(request).accountId)),
    },
    {
      method: 'PATCH',
      path: '/accounts/{accountId}',
      options: {
        id: 'accounts.update',
        plugins: withKeys({ responses: R.account, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams, payload: updateAccountBody },
      },
      handler: async (request, h) =>
        reply(request, h, await accounts.update(principalOf(request), p(request).accountId, request.payload as never)),
    },
    {
      method: 'GET',
      path: '/accounts/{accountId}/approval-settings',
      options: {
        id: 'accounts.approval-settings',
        plugins: withKeys({ responses: R.approvalSettings, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams },
      },
      handler: async (request, h) =>
        reply(request, h, await accounts.approvalSettings.get(principalOf(request), p(request).accountId)),
    },
    {
      method: 'PATCH',
      path: '/accounts/{accountId}/approval-settings',
      options: {
        id: 'accounts.approval-settings.update',
        plugins: withKeys({ responses: R.approvalSettings, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams, payload: approvalSettingsBody },
      },
      handler: async (request, h) => {
        const { requireApproverSecondFactor } = request.payload as { requireApproverSecondFactor: boolean };
        return reply(
          request,
          h,
          await accounts.approvalSettings.set(principalOf(request), p(request).accountId, requireApproverSecondFactor),
        );
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}',
      options: {
        id: 'accounts.delete',
        plugins: withKeys({ responses: R.deleted, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams },
      },
      handler: async (request, h) => {
        const deleted = await accounts.deletion.softDelete(principalOf(request), p(request).accountId);
        return reply(request, h, { id: deleted.id, deletedAt: deleted.deletedAt });
      },
    },
  ];
}

/** The account's audit log. */
export function auditLogRoutes(app: PluginDeps): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'GET',
      path: '/accounts/{accountId}/logs',
      options: {
        id: 'accounts.logs',
        plugins: withKeys({ responses: R.logs, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams, query: Joi.object(cursorQuery({ max: 100, defaultLimit: 20 })) },
      },
      handler: async (request, h) => {
        const page = request.query as { limit: number; cursor?: string };
        const { items, meta } = await accounts.logs(principalOf(request), p(request).accountId, page);
        return reply(request, h, items, { meta });
      },
    },
  ];
}
