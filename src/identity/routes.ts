import type { ServerRoute } from '@hapi/hapi';
import type { AppContext } from '../app.js';
import { API } from '../http/server.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { presentUser } from './presenters.js';
import { loginBody, magicLinkBody, refreshBody, tokenBody } from './schemas.js';

/** Login and refresh answer the same body (CONTRACT.md, Sign-in API). */
export function sessionBody(result: { accessToken: string; refreshToken: string; tokenType: 'Bearer'; expiresIn: number; user: Parameters<typeof presentUser>[0] }) {
  const user = presentUser(result.user);
  return {
    accessToken: result.accessToken,
    refreshToken: result.refreshToken,
    tokenType: result.tokenType,
    expiresIn: result.expiresIn,
    user: { id: user.id, email: user.email, fullName: user.fullName, username: user.username },
  };
}

export function identityRoutes(app: AppContext): ServerRoute[] {
  const { identity } = app.services;
  return [
    {
      method: 'POST',
      path: `${API}/auth/login`,
      options: {
        id: 'auth.login',
        auth: false,
        plugins: { gantry: { rateLimit: { limit: 8, windowSec: 60 } } },
        validate: { payload: loginBody },
      },
      handler: async (request, h) => {
        const { email, password } = request.payload as { email: string; password: string };
        return reply(request, h, sessionBody(await identity.login(email, password)));
      },
    },
    {
      method: 'POST',
      path: `${API}/auth/refresh`,
      options: { id: 'auth.refresh', auth: false, validate: { payload: refreshBody } },
      handler: async (request, h) => {
        const { refreshToken } = request.payload as { refreshToken: string };
        return reply(request, h, sessionBody(await identity.refresh(refreshToken)));
      },
    },
    {
      method: 'POST',
      path: `${API}/auth/logout`,
      options: { id: 'auth.logout', validate: { payload: refreshBody } },
      handler: async (request, h) => {
        const { refreshToken } = request.payload as { refreshToken: string };
        await identity.logout(principalOf(request).userId, refreshToken);
        return reply(request, h, { status: 'logged_out' });
      },
    },
    {
      method: 'POST',
      path: `${API}/auth/magic-link`,
      options: { id: 'auth.magic-link', auth: false, plugins: { gantry: { rateLimit: { limit: 5, windowSec: 300 } } }, validate: { payload: magicLinkBody } },
      handler: async (request, h) => {
        await identity.magicLinks.request((request.payload as { email: string }).email);
        return reply(request, h, { status: 'sent_if_known' }, { status: 202 });
      },
    },
    {
      method: 'POST',
      path: `${API}/auth/magic-link/verify`,
      options: { id: 'auth.magic-link.verify', auth: false, plugins: { gantry: { rateLimit: { limit: 15, windowSec: 300 } } }, validate: { payload: tokenBody } },
      handler: async (request, h) => reply(request, h, sessionBody(await identity.loginWithMagicLink((request.payload as { token: string }).token))),
    },
    {
      method: 'GET',
      path: `${API}/auth/me`,
      options: { id: 'auth.me' },
      handler: async (request, h) => reply(request, h, presentUser(await identity.getUser(principalOf(request).userId))),
    },
  ];
}
