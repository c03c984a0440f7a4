import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../http/plugin.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { presentUser } from './presenters.js';
import {
  changeEmailBody,
  changePasswordBody,
  checkUsernameQuery,
  claimUsernameBody,
  emailBody,
  exchangeRecoveryBody,
  loginBody,
  magicLinkBody,
  refreshBody,
  registerBody,
  resetPasswordBody,
  tokenBody,
} from './schemas.js';
import { SIGN_IN_LIMITS } from './limits.js';

const limits = SIGN_IN_LIMITS;

/** Login and refresh answer the same body (docs/interface.md, Sign-in API). */
function sessionBody(result: {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  user: Parameters<typeof presentUser>[0];
}) {
  const user = presentUser(result.user);
  return {
    accessToken: result.accessToken,
    refreshToken: result.refreshToken,
    tokenType: result.tokenType,
    expiresIn: result.expiresIn,
    user: { id: user.id, email: user.email, fullName: user.fullName, username: user.username },
  };
}

export function identityRoutes(app: PluginDeps): ServerRoute[] {
  const { identity } = app.services;
  return [
    {
      method: 'POST',
      path: '/auth/login',
      options: {
        id: 'auth.login',
        auth: false,
        plugins: { gantry: { rateLimit: limits.login } },
        validate: { payload: loginBody },
      },
      handler: async (request, h) => {
        const { email, password } = request.payload as { email: string; password: string };
        return reply(request, h, sessionBody(await identity.login(email, password)));
      },
    },
    {
      method: 'POST',
      path: '/auth/refresh',
      options: { id: 'auth.refresh', auth: false, validate: { payload: refreshBody } },
      handler: async (request, h) => {
        const { refreshToken } = request.payload as { refreshToken: string };
        return reply(request, h, sessionBody(await identity.refresh(refreshToken)));
      },
    },
    {
      method: 'POST',
      path: '/auth/logout',
      options: { id: 'auth.logout', validate: { payload: refreshBody } },
      handler: async (request, h) => {
        const { refreshToken } = request.payload as { refreshToken: string };
        await identity.logout(principalOf(request).userId, refreshToken);
        return reply(request, h, { status: 'logged_out' });
      },
    },
    {
      method: 'POST',
      path: '/auth/magic-link',
      options: {
        id: 'auth.magic-link',
        auth: false,
        plugins: { gantry: { rateLimit: limits.magicLink } },
        validate: { payload: magicLinkBody },
      },
      handler: async (request, h) => {
        await identity.magicLinks.request((request.payload as { email: string }).email);
        return reply(request, h, { status: 'sent_if_known' }, { status: 202 });
      },
    },
    {
      method: 'POST',
      path: '/auth/magic-link/verify',
      options: {
        id: 'auth.magic-link.verify',
        auth: false,
        plugins: { gantry: { rateLimit: { limit: 15, windowSec: 300 } } },
        validate: { payload: tokenBody },
      },
      handler: async (request, h) =>
        reply(request, h, sessionBody(await identity.loginWithMagicLink((request.payload as { token: string }).token))),
    },
    {
      method: 'GET',
      path: '/auth/me',
      options: { id: 'auth.me' },
      handler: async (request, h) =>
        reply(request, h, presentUser(await identity.getUserCached(principalOf(request).userId))),
    },
    {
      method: 'POST',
      path: '/auth/register',
      options: {
        id: 'auth.register',
        auth: false,
        plugins: { gantry: { rateLimit: limits.register } },
        validate: { payload: registerBody },
      },
      handler: async (request, h) => {
        const body = request.payload as {
          email: string;
          password: string;
          fullName?: string | null;
          username?: string | null;
        };
        return reply(request, h, { user: presentUser(await identity.flows.register(body)) }, { status: 201 });
      },
    },
    {
      method: 'POST',
      path: '/auth/confirm-email',
      options: {
        id: 'auth.confirm-email',
        auth: false,
        plugins: { gantry: { rateLimit: limits.confirmEmail } },
        validate: { payload: tokenBody },
      },
      handler: async (request, h) =>
        reply(request, h, {
          user: presentUser(await identity.flows.confirmEmail((request.payload as { token: string }).token)),
        }),
    },
    {
      method: 'POST',
      path: '/auth/resend-confirmation',
      options: {
        id: 'auth.resend-confirmation',
        auth: false,
        plugins: { gantry: { rateLimit: limits.resendConfirmation } },
        validate: { payload: emailBody },
      },
      handler: async (request, h) => {
        await identity.flows.resendConfirmation((request.payload as { email: string }).email);
        return reply(request, h, { status: 'sent_if_unconfirmed' }, { status: 202 });
      },
    },
    {
      method: 'POST',
      path: '/auth/forgot-password',
      options: {
        id: 'auth.forgot-password',
        auth: false,
        plugins: { gantry: { rateLimit: limits.forgotPassword } },
        validate: { payload: emailBody },
      },
      handler: async (request, h) => {
        await identity.flows.forgotPassword((request.payload as { email: string }).email);
        return reply(request, h, { status: 'sent_if_known' }, { status: 202 });
      },
    },
    {
      method: 'POST',
      path: '/auth/exchange-recovery-code',
      options: {
        id: 'auth.exchange-recovery-code',
        auth: false,
        plugins: { gantry: { rateLimit: limits.exchangeRecoveryCode } },
        validate: { payload: exchangeRecoveryBody },
      },
      handler: async (request, h) => {
        const { email, code } = request.payload as { email: string; code: string };
        return reply(request, h, await identity.flows.exchangeRecoveryCode(email, code));
      },
    },
    {
      method: 'POST',
      path: '/auth/reset-password',
      options: {
        id: 'auth.reset-password',
        auth: false,
        plugins: { gantry: { rateLimit: limits.resetPassword } },
        validate: { payload: resetPasswordBody },
      },
      handler: async (request, h) => {
        const { resetToken, password } = request.payload as { resetToken: string; password: string };
        await identity.flows.resetPassword(resetToken, password);
        return reply(request, h, { status: 'password_reset' });
      },
    },
    {
      method: 'GET',
      path: '/auth/check-username',
      options: {
        id: 'auth.check-username',
        auth: { mode: 'optional' },
        plugins: { gantry: { rateLimit: limits.checkUsername } },
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
        plugins: { gantry: { rateLimit: limits.claimUsername } },
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
        plugins: { gantry: { rateLimit: limits.changeEmail } },
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
        plugins: { gantry: { rateLimit: limits.changePassword } },
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
