import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { clientDeviceOf } from '../http/client-address.js';
import { presentUser } from './presenters.js';
import {
  emailBody,
  exchangeRecoveryBody,
  loginBody,
  magicLinkBody,
  refreshBody,
  registerBody,
  resetPasswordBody,
  responses,
  tokenBody,
} from './schemas.js';
import { SIGN_IN_LIMITS } from './limits.js';

const limits = SIGN_IN_LIMITS;
const R = responses;

/** Login and refresh answer the same body (docs/interface.md, Sign-in API). */
export function sessionBody(result: {
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
        plugins: {
          gantry: {
            responses: R.session,
            errors: ['INVALID_CREDENTIALS', 'MFA_REQUIRED', 'FORBIDDEN'],
            rateLimit: limits.login,
          },
        },
        validate: { payload: loginBody },
      },
      handler: async (request, h) => {
        const { email, password } = request.payload as { email: string; password: string };
        return reply(request, h, sessionBody(await identity.login(email, password, clientDeviceOf(request))));
      },
    },
    {
      method: 'POST',
      path: '/auth/refresh',
      options: {
        id: 'auth.refresh',
        plugins: { gantry: { responses: R.session, errors: ['UNAUTHORIZED', 'FORBIDDEN'] } },
        auth: false,
        validate: { payload: refreshBody },
      },
      handler: async (request, h) => {
        const { refreshToken } = request.payload as { refreshToken: string };
        return reply(request, h, sessionBody(await identity.refresh(refreshToken)));
      },
    },
    {
      method: 'POST',
      path: '/auth/logout',
      options: {
        id: 'auth.logout',
        plugins: { gantry: { responses: R.loggedOut } },
        validate: { payload: refreshBody },
      },
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
        plugins: { gantry: { responses: R.sentIfKnown, rateLimit: limits.magicLink } },
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
        plugins: {
          gantry: {
            responses: R.session,
            errors: ['UNAUTHORIZED', 'GONE', 'FORBIDDEN', 'MFA_REQUIRED'],
            rateLimit: { limit: 15, windowSec: 300, acrossNodes: true },
          },
        },
        validate: { payload: tokenBody },
      },
      handler: async (request, h) =>
        reply(
          request,
          h,
          sessionBody(
            await identity.loginWithMagicLink((request.payload as { token: string }).token, clientDeviceOf(request)),
          ),
        ),
    },
    {
      method: 'GET',
      path: '/auth/me',
      options: { id: 'auth.me', plugins: { gantry: { responses: R.user, errors: ['NOT_FOUND'] } } },
      handler: async (request, h) =>
        reply(request, h, presentUser(await identity.getUserCached(principalOf(request).userId))),
    },
    {
      method: 'POST',
      path: '/auth/register',
      options: {
        id: 'auth.register',
        auth: false,
        plugins: { gantry: { responses: R.registered, errors: ['CONFLICT'], rateLimit: limits.register } },
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
        plugins: {
          gantry: {
            responses: R.userInside,
            errors: ['UNAUTHORIZED', 'GONE', 'CONFLICT'],
            rateLimit: limits.confirmEmail,
          },
        },
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
        plugins: { gantry: { responses: R.sentIfUnconfirmed, rateLimit: limits.resendConfirmation } },
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
        plugins: { gantry: { responses: R.sentIfKnown, rateLimit: limits.forgotPassword } },
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
        plugins: {
          gantry: { responses: R.resetToken, errors: ['UNAUTHORIZED', 'GONE'], rateLimit: limits.exchangeRecoveryCode },
        },
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
        plugins: {
          gantry: { responses: R.passwordReset, errors: ['UNAUTHORIZED', 'GONE'], rateLimit: limits.resetPassword },
        },
        validate: { payload: resetPasswordBody },
      },
      handler: async (request, h) => {
        const { resetToken, password } = request.payload as { resetToken: string; password: string };
        await identity.flows.resetPassword(resetToken, password);
        return reply(request, h, { status: 'password_reset' });
      },
    },
  ];
}
