import { responses as R } from '../schemas.js';
import { ACCOUNT_ERRORS } from './options.js';
import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../services.js';
import { reply } from '../../http/envelope.js';
import { principalOf } from '../../http/auth.js';
import { id, workspaceBody, workspaceMemberBody } from '../schemas.js';
import { accountParams, p, withKeys } from './options.js';

/** Workspaces of an account and their members. */
export function workspaceRoutes(app: PluginDeps): ServerRoute[] {
  const { workspaces } = app.services.accounts;
  return [
    {
      method: 'GET',
      path: '/accounts/{accountId}/workspaces',
      options: {
        id: 'accounts.workspaces.list',
        plugins: withKeys({ responses: R.workspaces, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams },
      },
      handler: async (request, h) =>
        reply(request, h, await workspaces.list(principalOf(request), p(request).accountId)),
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/workspaces',
      options: {
        id: 'accounts.workspaces.create',
        plugins: withKeys({ responses: R.workspaceCreated, errors: ACCOUNT_ERRORS }),
        validate: { params: accountParams, payload: workspaceBody },
      },
      handler: async (request, h) => {
        const { name } = request.payload as { name: string };
        return reply(request, h, await workspaces.create(principalOf(request), p(request).accountId, name), {
          status: 201,
        });
      },
    },
    {
      method: 'PATCH',
      path: '/accounts/{accountId}/workspaces/{workspaceId}',
      options: {
        id: 'accounts.workspaces.rename',
        plugins: withKeys({ responses: R.workspace, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, workspaceId: id }), payload: workspaceBody },
      },
      handler: async (request, h) => {
        const { accountId, workspaceId } = p(request);
        const { name } = request.payload as { name: string };
        return reply(request, h, await workspaces.rename(principalOf(request), accountId, workspaceId, name));
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/workspaces/{workspaceId}',
      options: {
        id: 'accounts.workspaces.delete',
        plugins: withKeys({ responses: R.workspaceRemoved, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, workspaceId: id }) },
      },
      handler: async (request, h) => {
        const { accountId, workspaceId } = p(request);
        return reply(request, h, await workspaces.remove(principalOf(request), accountId, workspaceId));
      },
    },
    {
      method: 'GET',
      path: '/accounts/{accountId}/workspaces/{workspaceId}/members',
      options: {
        id: 'accounts.workspaces.members.list',
        plugins: withKeys({ responses: R.workspaceMembers, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, workspaceId: id }) },
      },
      handler: async (request, h) => {
        const { accountId, workspaceId } = p(request);
        return reply(request, h, await workspaces.listMembers(principalOf(request), accountId, workspaceId));
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/workspaces/{workspaceId}/members',
      options: {
        id: 'accounts.workspaces.members.add',
        plugins: withKeys({ responses: R.workspaceMemberAdded, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, workspaceId: id }), payload: workspaceMemberBody },
      },
      handler: async (request, h) => {
        const { accountId, workspaceId } = p(request);
        const added = await workspaces.addMember(
          principalOf(request),
          accountId,
          workspaceId,
          request.payload as never,
        );
        return reply(request, h, added, { status: 201 });
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/workspaces/{workspaceId}/members/{chainerId}',
      options: {
        id: 'accounts.workspaces.members.remove',
        plugins: withKeys({ responses: R.workspaceMemberRemoved, errors: ACCOUNT_ERRORS }),
        validate: { params: Joi.object({ accountId: id, workspaceId: id, chainerId: id }) },
      },
      handler: async (request, h) => {
        const { accountId, workspaceId, chainerId } = p(request);
        return reply(
          request,
          h,
          await workspaces.removeMember(principalOf(request), accountId, workspaceId, chainerId),
        );
      },
    },
  ];
}
