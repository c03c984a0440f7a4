import Joi from 'joi';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../../http/plugin.js';
import { reply } from '../../http/envelope.js';
import { ANY_MEMBER, OWNER_OR_ADMIN } from '../roles.js';
import { id, workspaceBody, workspaceMemberBody } from '../schemas.js';
import { accountParams, p, withKeys, type Guard } from './guard.js';

/** Workspaces of an account and their members. */
export function workspaceRoutes(app: PluginDeps, guard: Guard): ServerRoute[] {
  const { accounts } = app.services;
  return [
    {
      method: 'GET',
      path: '/accounts/{accountId}/workspaces',
      options: { id: 'accounts.workspaces.list', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        const { principal, context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(
          request,
          h,
          await accounts.workspaces.list(context.accountId, { userId: principal.userId, role: context.role }),
        );
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/workspaces',
      options: {
        id: 'accounts.workspaces.create',
        plugins: withKeys,
        validate: { params: accountParams, payload: workspaceBody },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(
          request,
          h,
          await accounts.workspaces.create(p(request).accountId, actor, (request.payload as { name: string }).name),
          { status: 201 },
        );
      },
    },
    {
      method: 'PATCH',
      path: '/accounts/{accountId}/workspaces/{workspaceId}',
      options: {
        id: 'accounts.workspaces.rename',
        plugins: withKeys,
        validate: { params: Joi.object({ accountId: id, workspaceId: id }), payload: workspaceBody },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(
          request,
          h,
          await accounts.workspaces.rename(
            p(request).accountId,
            actor,
            p(request).workspaceId,
            (request.payload as { name: string }).name,
          ),
        );
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/workspaces/{workspaceId}',
      options: {
        id: 'accounts.workspaces.delete',
        plugins: withKeys,
        validate: { params: Joi.object({ accountId: id, workspaceId: id }) },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.workspaces.remove(p(request).accountId, actor, p(request).workspaceId));
      },
    },
    {
      method: 'GET',
      path: '/accounts/{accountId}/workspaces/{workspaceId}/members',
      options: {
        id: 'accounts.workspaces.members.list',
        plugins: withKeys,
        validate: { params: Joi.object({ accountId: id, workspaceId: id }) },
      },
      handler: async (request, h) => {
        const { principal, context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(
          request,
          h,
          await accounts.workspaces.listMembers(context.accountId, p(request).workspaceId, {
            userId: principal.userId,
            role: context.role,
          }),
        );
      },
    },
    {
      method: 'POST',
      path: '/accounts/{accountId}/workspaces/{workspaceId}/members',
      options: {
        id: 'accounts.workspaces.members.add',
        plugins: withKeys,
        validate: { params: Joi.object({ accountId: id, workspaceId: id }), payload: workspaceMemberBody },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(
          request,
          h,
          await accounts.workspaces.addMember(
            p(request).accountId,
            actor,
            p(request).workspaceId,
            request.payload as never,
          ),
          { status: 201 },
        );
      },
    },
    {
      method: 'DELETE',
      path: '/accounts/{accountId}/workspaces/{workspaceId}/members/{chainerId}',
      options: {
        id: 'accounts.workspaces.members.remove',
        plugins: withKeys,
        validate: { params: Joi.object({ accountId: id, workspaceId: id, chainerId: id }) },
      },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(
          request,
          h,
          await accounts.workspaces.removeMember(
            p(request).accountId,
            actor,
            p(request).workspaceId,
            p(request).chainerId,
          ),
        );
      },
    },
  ];
}
