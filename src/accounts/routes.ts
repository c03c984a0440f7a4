import Joi from 'joi';
import type { Request, ServerRoute } from '@hapi/hapi';
import type { AppContext } from '../app.js';
import { API } from '../http/server.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { offsetMeta, offsetQuery, cursorQuery } from '../http/pagination.js';
import { tenancyHeaders } from './access.js';
import { ANY_MEMBER, OWNER_OR_ADMIN, type Role } from './roles.js';
import { addMemberBody, apiKeyBody, changeRoleBody, createAccountBody, id, inviteBody, removeMemberQuery, tokenBody, transferBody, updateAccountBody, workspaceBody, workspaceMemberBody } from './schemas.js';
import { invitationPageRoutes } from './pages.js';
import { SIGNATURE_HEADER } from './billing.js';

const OWNER: readonly Role[] = ['owner'];
/** Account routes accept enterprise API keys (acting as the key's owner). */
const withKeys = { gantry: { apiKeys: true } };

export function accountsRoutes(app: AppContext): ServerRoute[] {
  const { accounts } = app.services;
  const { access } = accounts;

  /** The caller's membership in the path's account with one of the roles; 403 otherwise. */
  async function guard(request: Request, accountId: string, roles: readonly Role[]) {
    const principal = principalOf(request);
    const context = await access.inAccount(principal, accountId);
    access.requireRole(context, roles);
    return { principal, context, actor: { userId: principal.userId } };
  }
  const p = (request: Request) => request.params as Record<string, string>;
  const accountParams = Joi.object({ accountId: id });

  return [
    {
      method: 'GET',
      path: `${API}/accounts/me`,
      options: { id: 'accounts.me', plugins: withKeys },
      handler: async (request, h) => {
        const context = await access.current(principalOf(request), tenancyHeaders(request.headers as Record<string, string | undefined>).accountId);
        return reply(request, h, await accounts.get(context.accountId));
      },
    },
    {
      method: 'POST',
      path: `${API}/accounts`,
      options: { id: 'accounts.create', validate: { payload: createAccountBody } },
      handler: async (request, h) => reply(request, h, await accounts.create(principalOf(request).userId, request.payload as never), { status: 201 }),
    },
    {
      method: 'GET',
      path: `${API}/accounts/{accountId}`,
      options: { id: 'accounts.get', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        const { context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.summary(context.accountId, context.role));
      },
    },
    {
      method: 'PATCH',
      path: `${API}/accounts/{accountId}`,
      options: { id: 'accounts.update', plugins: withKeys, validate: { params: accountParams, payload: updateAccountBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.update(p(request).accountId, actor, request.payload as never));
      },
    },
    {
      method: 'DELETE',
      path: `${API}/accounts/{accountId}`,
      options: { id: 'accounts.delete', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER);
        const { id: accountId, deletedAt } = await accounts.deletion.softDelete(p(request).accountId, actor);
        return reply(request, h, { id: accountId, deletedAt });
      },
    },

    // Members
    {
      method: 'GET',
      path: `${API}/accounts/{accountId}/members`,
      options: { id: 'accounts.members.list', plugins: withKeys, validate: { params: accountParams, query: Joi.object(offsetQuery({ max: 500 })) } },
      handler: async (request, h) => {
        await guard(request, p(request).accountId, ANY_MEMBER);
        const { limit, offset } = request.query as { limit: number; offset: number };
        const { items, total } = await accounts.members.list(p(request).accountId, limit, offset);
        return reply(request, h, items, { meta: { ...offsetMeta(total, limit, offset) } });
      },
    },
    {
      method: 'POST',
      path: `${API}/accounts/{accountId}/members`,
      options: { id: 'accounts.members.add', plugins: withKeys, validate: { params: accountParams, payload: addMemberBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.members.add(p(request).accountId, actor, request.payload as never), { status: 201 });
      },
    },
    {
      method: 'PATCH',
      path: `${API}/accounts/{accountId}/members/{chainerId}`,
      options: { id: 'accounts.members.update', plugins: withKeys, validate: { params: Joi.object({ accountId: id, chainerId: id }), payload: changeRoleBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.members.changeRole(p(request).accountId, actor, p(request).chainerId, (request.payload as { role: never }).role));
      },
    },
    {
      method: 'DELETE',
      path: `${API}/accounts/{accountId}/members/{chainerId}`,
      options: { id: 'accounts.members.remove', plugins: withKeys, validate: { params: Joi.object({ accountId: id, chainerId: id }), query: removeMemberQuery } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        const releaseSeat = (request.query as { releaseSeat: string }).releaseSeat === 'true';
        return reply(request, h, await accounts.members.remove(p(request).accountId, actor, p(request).chainerId, { releaseSeat }));
      },
    },

    // Audit log
    {
      method: 'GET',
      path: `${API}/accounts/{accountId}/logs`,
      options: { id: 'accounts.logs', plugins: withKeys, validate: { params: accountParams, query: Joi.object(cursorQuery({ max: 100, defaultLimit: 20 })) } },
      handler: async (request, h) => {
        await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        const { items, meta } = await accounts.logs(p(request).accountId, request.query as { limit: number; cursor?: string });
        return reply(request, h, items, { meta });
      },
    },

    // Invitations
    {
      method: 'POST',
      path: `${API}/accounts/{accountId}/invitations`,
      options: { id: 'accounts.invitations.create', plugins: withKeys, validate: { params: accountParams, payload: inviteBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.invitations.create(p(request).accountId, actor, request.payload as never), { status: 201 });
      },
    },
    {
      method: 'GET',
      path: `${API}/accounts/{accountId}/invitations`,
      options: { id: 'accounts.invitations.list', plugins: withKeys, validate: { params: accountParams, query: Joi.object(offsetQuery()) } },
      handler: async (request, h) => {
        await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        const { limit, offset } = request.query as { limit: number; offset: number };
        const { items, total } = await accounts.invitations.list(p(request).accountId, limit, offset);
        return reply(request, h, items, { meta: { ...offsetMeta(total, limit, offset) } });
      },
    },
    {
      method: 'DELETE',
      path: `${API}/accounts/{accountId}/invitations/{invitationId}`,
      options: { id: 'accounts.invitations.revoke', plugins: withKeys, validate: { params: Joi.object({ accountId: id, invitationId: id }) } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.invitations.revoke(p(request).accountId, actor, p(request).invitationId));
      },
    },
    {
      method: 'POST',
      path: `${API}/accounts/{accountId}/invitations/{invitationId}/resend`,
      options: { id: 'accounts.invitations.resend', plugins: withKeys, validate: { params: Joi.object({ accountId: id, invitationId: id }) } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.invitations.resend(p(request).accountId, actor, p(request).invitationId));
      },
    },
    {
      method: 'POST',
      path: `${API}/invitations/accept`,
      options: { id: 'invitations.accept', validate: { payload: tokenBody } },
      handler: async (request, h) => reply(request, h, await accounts.invitations.accept(principalOf(request).userId, (request.payload as { token: string }).token)),
    },

    // Workspaces
    {
      method: 'GET',
      path: `${API}/accounts/{accountId}/workspaces`,
      options: { id: 'accounts.workspaces.list', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        const { principal, context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.workspaces.list(context.accountId, { userId: principal.userId, role: context.role }));
      },
    },
    {
      method: 'POST',
      path: `${API}/accounts/{accountId}/workspaces`,
      options: { id: 'accounts.workspaces.create', plugins: withKeys, validate: { params: accountParams, payload: workspaceBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.workspaces.create(p(request).accountId, actor, (request.payload as { name: string }).name), { status: 201 });
      },
    },
    {
      method: 'PATCH',
      path: `${API}/accounts/{accountId}/workspaces/{workspaceId}`,
      options: { id: 'accounts.workspaces.rename', plugins: withKeys, validate: { params: Joi.object({ accountId: id, workspaceId: id }), payload: workspaceBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.workspaces.rename(p(request).accountId, actor, p(request).workspaceId, (request.payload as { name: string }).name));
      },
    },
    {
      method: 'DELETE',
      path: `${API}/accounts/{accountId}/workspaces/{workspaceId}`,
      options: { id: 'accounts.workspaces.delete', plugins: withKeys, validate: { params: Joi.object({ accountId: id, workspaceId: id }) } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.workspaces.remove(p(request).accountId, actor, p(request).workspaceId));
      },
    },
    {
      method: 'GET',
      path: `${API}/accounts/{accountId}/workspaces/{workspaceId}/members`,
      options: { id: 'accounts.workspaces.members.list', plugins: withKeys, validate: { params: Joi.object({ accountId: id, workspaceId: id }) } },
      handler: async (request, h) => {
        const { principal, context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.workspaces.listMembers(context.accountId, p(request).workspaceId, { userId: principal.userId, role: context.role }));
      },
    },
    {
      method: 'POST',
      path: `${API}/accounts/{accountId}/workspaces/{workspaceId}/members`,
      options: { id: 'accounts.workspaces.members.add', plugins: withKeys, validate: { params: Joi.object({ accountId: id, workspaceId: id }), payload: workspaceMemberBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.workspaces.addMember(p(request).accountId, actor, p(request).workspaceId, request.payload as never), { status: 201 });
      },
    },
    {
      method: 'DELETE',
      path: `${API}/accounts/{accountId}/workspaces/{workspaceId}/members/{chainerId}`,
      options: { id: 'accounts.workspaces.members.remove', plugins: withKeys, validate: { params: Joi.object({ accountId: id, workspaceId: id, chainerId: id }) } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER_OR_ADMIN);
        return reply(request, h, await accounts.workspaces.removeMember(p(request).accountId, actor, p(request).workspaceId, p(request).chainerId));
      },
    },

    // Ownership transfer
    {
      method: 'GET',
      path: `${API}/accounts/{accountId}/ownership-transfer`,
      options: { id: 'accounts.ownership.get', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.ownership.current(p(request).accountId));
      },
    },
    {
      method: 'POST',
      path: `${API}/accounts/{accountId}/ownership-transfer`,
      options: { id: 'accounts.ownership.propose', validate: { params: accountParams, payload: transferBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, OWNER);
        return reply(request, h, await accounts.ownership.propose(p(request).accountId, actor.userId, (request.payload as { chainerId: string }).chainerId), { status: 201 });
      },
    },
    {
      method: 'POST',
      path: `${API}/accounts/{accountId}/ownership-transfer/accept`,
      options: { id: 'accounts.ownership.accept', validate: { params: accountParams } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.ownership.accept(p(request).accountId, actor.userId));
      },
    },
    {
      method: 'DELETE',
      path: `${API}/accounts/{accountId}/ownership-transfer`,
      options: { id: 'accounts.ownership.cancel', validate: { params: accountParams } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.ownership.cancel(p(request).accountId, actor.userId));
      },
    },

    // Enterprise API keys (issued with a session only: a key cannot mint keys)
    {
      method: 'POST',
      path: `${API}/accounts/{accountId}/api-keys`,
      options: { id: 'accounts.api-keys.create', validate: { params: accountParams, payload: apiKeyBody } },
      handler: async (request, h) => {
        const { actor } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.apiKeys.create(p(request).accountId, actor.userId, (request.payload as { name: string }).name), { status: 201 });
      },
    },
    {
      method: 'GET',
      path: `${API}/accounts/{accountId}/api-keys`,
      options: { id: 'accounts.api-keys.list', plugins: withKeys, validate: { params: accountParams } },
      handler: async (request, h) => {
        const { principal, context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.apiKeys.list(context.accountId, { userId: principal.userId, role: context.role }));
      },
    },
    {
      method: 'DELETE',
      path: `${API}/accounts/{accountId}/api-keys/{keyId}`,
      options: { id: 'accounts.api-keys.revoke', plugins: withKeys, validate: { params: Joi.object({ accountId: id, keyId: id }) } },
      handler: async (request, h) => {
        const { actor, context } = await guard(request, p(request).accountId, ANY_MEMBER);
        return reply(request, h, await accounts.apiKeys.revoke(context.accountId, actor, context.role, p(request).keyId));
      },
    },

    // The billing provider's webhook: anonymous, authenticated by its HMAC signature over the raw body.
    {
      method: 'POST',
      path: `${API}/billing/webhook`,
      options: {
        id: 'billing.webhook',
        auth: false,
        payload: { parse: false, output: 'data', maxBytes: 64 * 1024 },
      },
      handler: async (request, h) => {
        const raw = Buffer.isBuffer(request.payload) ? request.payload : Buffer.from(String(request.payload ?? ''));
        const header = request.headers[SIGNATURE_HEADER] as string | undefined;
        return reply(request, h, await accounts.billingWebhook.receive(raw, header));
      },
    },

    ...invitationPageRoutes(app),
  ];
}
