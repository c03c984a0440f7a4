import type { Request, ServerRoute } from '@hapi/hapi';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { clientDeviceOf } from '../http/client-address.js';
import { DomainError } from '../http/errors.js';
import { responses as R } from './schemas.js';
import {
  factorResponses as F,
  passkeyOptionsBody,
  passkeyParams,
  passkeyRegistrationBody,
  passkeySignInBody,
} from './factor-schemas.js';
import { SIGN_IN_LIMITS as limits } from './limits.js';
import { sessionBody } from './routes.js';

/**
 * Passkeys over the API (docs/identity.md, Passkeys): the signed-in user's list, registration
 * and removal (bearer), and a sign-in with one (no bearer), which answers like a login. With a
 * public URL on an IP address or plain http, the ceremonies answer 503 NOT_CONFIGURED.
 */
export function passkeyRoutes(app: PluginDeps): ServerRoute[] {
  const { identity } = app.services;
  const { passkeys } = identity;
  const userId = (request: Request) => principalOf(request).userId;

  return [
    {
      method: 'GET',
      path: '/auth/passkeys',
      options: { id: 'auth.passkeys', plugins: { gantry: { responses: F.passkeys } } },
      handler: async (request, h) => reply(request, h, await passkeys.list(userId(request))),
    },
    {
      method: 'POST',
      path: '/auth/passkeys/registration/options',
      options: {
        id: 'auth.passkeys.registration-options',
        plugins: {
          gantry: { responses: F.options, errors: ['CONFLICT', 'NOT_CONFIGURED'], rateLimit: limits.passkeys },
        },
      },
      handler: async (request, h) =>
        reply(request, h, await passkeys.registrationOptions(await identity.getUser(userId(request)))),
    },
    {
      method: 'POST',
      path: '/auth/passkeys',
      options: {
        id: 'auth.passkeys.create',
        plugins: {
          gantry: { responses: F.passkeyCreated, errors: ['CONFLICT', 'NOT_CONFIGURED'], rateLimit: limits.passkeys },
        },
        validate: { payload: passkeyRegistrationBody },
      },
      handler: async (request, h) => {
        const body = request.payload as { credential: RegistrationResponseJSON; name?: string };
        const user = await identity.getUser(userId(request));
        return reply(request, h, await passkeys.register(user, body.credential, body.name ?? null), { status: 201 });
      },
    },
    {
      method: 'DELETE',
      path: '/auth/passkeys/{passkeyId}',
      options: {
        id: 'auth.passkeys.remove',
        plugins: { gantry: { responses: F.passkeyRemoved, errors: ['NOT_FOUND'] } },
        validate: { params: passkeyParams },
      },
      handler: async (request, h) => {
        const { passkeyId } = request.params as { passkeyId: string };
        await passkeys.remove(userId(request), passkeyId);
        return reply(request, h, { id: passkeyId, removed: true as const });
      },
    },
    {
      method: 'POST',
      path: '/auth/passkeys/authentication/options',
      options: {
        id: 'auth.passkeys.authentication-options',
        auth: false,
        plugins: {
          gantry: {
            responses: F.options,
            errors: ['UNAUTHORIZED', 'CONFLICT', 'NOT_CONFIGURED'],
            rateLimit: limits.passkeys,
          },
        },
        validate: { payload: passkeyOptionsBody },
      },
      handler: async (request, h) => {
        // With the token of a sign-in's second step: that user's passkeys (security keys that
        // are not discoverable included); without: any discoverable one.
        const mfaToken = (request.payload as { mfaToken?: string } | null)?.mfaToken;
        let forUser: string | null = null;
        if (mfaToken) {
          const pending = await identity.factors.peekSecondStep(mfaToken);
          if (!pending?.userId)
            throw new DomainError('UNAUTHORIZED', 'This sign-in has expired or is unknown; sign in again');
          forUser = pending.userId;
        }
        return reply(request, h, await passkeys.authenticationOptions(forUser));
      },
    },
    {
      method: 'POST',
      path: '/auth/passkeys/authentication/verify',
      options: {
        id: 'auth.passkeys.authentication-verify',
        auth: false,
        plugins: {
          gantry: {
            responses: R.session,
            errors: ['INVALID_CREDENTIALS', 'UNAUTHORIZED', 'NOT_CONFIGURED'],
            rateLimit: limits.login,
          },
        },
        validate: { payload: passkeySignInBody },
      },
      handler: async (request, h) => {
        const body = request.payload as { credential: AuthenticationResponseJSON; mfaToken?: string };
        const result = await identity.loginWithPasskey(body.credential, clientDeviceOf(request), body.mfaToken);
        return reply(request, h, sessionBody(result));
      },
    },
  ];
}
