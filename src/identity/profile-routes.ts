import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { presentUser } from './presenters.js';
import {
  changeEmailBody,
  changePasswordBody,
  checkUsernameQuery,
  claimUsernameBody,
  responses as R,
} from './schemas.js';
import { SIGN_IN_LIMITS as limits } from './limits.js';

/** A signed-in user's own profile: username, email and password changes (docs/interface.md, Sign-in API). */
export function profileRoutes(app: PluginDeps): ServerRoute[] {
  const { identity } = app.services;
  return [
    {
      method: 'GET',
      path: '/auth/check-username',
      options: {
        id: 'auth.check-username',
        auth: { mode: 'optional' },
        plugins: { gantry: { responses: R.usernameAvailable, rateLimit: limits.checkUsername } },
        validate: { query: checkUsernameQuery },
      },
      handler: async (request, h) => {
        const { username } = request.query as { username: string };
        const caller = request.auth.credentials as { userId?: string } | null;
        return reply(request, h, {
          username,
          available: await identity.flows.usernameAvailable(username, caller?.userId ?? null),
        });
      },
    },
    {
      method: 'POST',
      path: '/auth/claim-username',
      options: {
        id: 'auth.claim-username',
        plugins: { gantry: { responses: R.userInside, errors: ['CONFLICT'], rateLimit: limits.claimUsername } },
        validate: { payload: claimUsernameBody },
      },
      handler: async (request, h) => {
        const { username } = request.payload as { username: string };
        return reply(request, h, {
          user: presentUser(await identity.flows.claimUsername(principalOf(request).userId, username)),
        });
      },
    },
    {
      method: 'POST',
      path: '/auth/change-email',
      options: {
        id: 'auth.change-email',
        plugins: {
          gantry: {
            responses: R.emailChange,
            errors: ['INVALID_CREDENTIALS', 'FORBIDDEN', 'CONFLICT'],
            rateLimit: limits.changeEmail,
          },
        },
        validate: { payload: changeEmailBody },
      },
      handler: async (request, h) => {
        const { newEmail, password } = request.payload as { newEmail: string; password: string };
        await identity.flows.requestEmailChange(principalOf(request).userId, newEmail, password);
        return reply(request, h, { status: 'confirmation_sent', newEmail }, { status: 202 });
      },
    },
    {
      method: 'POST',
      path: '/auth/change-password',
      options: {
        id: 'auth.change-password',
        plugins: {
          gantry: {
            responses: R.passwordChanged,
            errors: ['INVALID_CREDENTIALS', 'FORBIDDEN'],
            rateLimit: limits.changePassword,
          },
        },
        validate: { payload: changePasswordBody },
      },
      handler: async (request, h) => {
        const { currentPassword, newPassword } = request.payload as { currentPassword: string; newPassword: string };
        const principal = principalOf(request);
        const result = await identity.flows.changePassword(
          principal.userId,
          principal.sessionId,
          currentPassword,
          newPassword,
        );
        return reply(request, h, { status: 'password_changed', endedSessions: result.endedSessions });
      },
    },
  ];
}
