import type { Request, ServerRoute } from '@hapi/hapi';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { clientDeviceOf } from '../http/client-address.js';
import { responses as R } from './schemas.js';
import { codeBody, factorResponses as F, mfaLoginBody, sessionParams, stepUpBody } from './factor-schemas.js';
import { SIGN_IN_LIMITS as limits } from './limits.js';
import { sessionBody } from './routes.js';
import type { FactorAnswer } from './second-factors.js';

/** A step-up or second-step answer from a body: a code, or a passkey credential. */
const answerOf = (body: { code?: string; credential?: unknown }): FactorAnswer =>
  body.code !== undefined ? { code: body.code } : { passkey: body.credential as AuthenticationResponseJSON };

/**
 * The signed-in user's sessions, two-step sign-in (TOTP and recovery codes), the second step of
 * a sign-in and the step-up proof of a session (docs/identity.md). Bearer session tokens only:
 * no scope is declared, so a third-party token gets 403 INSUFFICIENT_SCOPE.
 */
export function factorRoutes(app: PluginDeps): ServerRoute[] {
  const { identity } = app.services;
  const { factors } = identity;
  const me = (request: Request) => identity.getUser(principalOf(request).userId);
  const code = (request: Request) => (request.payload as { code: string }).code;
  const codeErrors = { errors: ['FORBIDDEN', 'CONFLICT'] as const, rateLimit: { limit: 10, windowSec: 60 } };

  return [
    {
      method: 'GET',
      path: '/auth/sessions',
      options: { id: 'auth.sessions', plugins: { gantry: { responses: F.sessions } } },
      handler: async (request, h) => {
        const principal = principalOf(request);
        return reply(request, h, await identity.sessions.listLive(principal.userId, principal.sessionId));
      },
    },
    {
      method: 'DELETE',
      path: '/auth/sessions/{sessionId}',
      options: {
        id: 'auth.sessions.end',
        plugins: { gantry: { responses: F.sessionEnded, errors: ['NOT_FOUND'] } },
        validate: { params: sessionParams },
      },
      handler: async (request, h) => {
        const { sessionId } = request.params as { sessionId: string };
        await identity.sessions.endOwn(principalOf(request).userId, sessionId);
        return reply(request, h, { id: sessionId, revoked: true as const });
      },
    },
    {
      method: 'POST',
      path: '/auth/login/mfa',
      options: {
        id: 'auth.login.mfa',
        auth: false,
        plugins: {
          gantry: {
            responses: R.session,
            errors: ['INVALID_CREDENTIALS', 'UNAUTHORIZED'],
            rateLimit: limits.secondFactor,
          },
        },
        validate: { payload: mfaLoginBody },
      },
      handler: async (request, h) => {
        const body = request.payload as { mfaToken: string; code: string };
        const result = await identity.loginWithSecondFactor(
          body.mfaToken,
          { code: body.code },
          clientDeviceOf(request),
        );
        return reply(request, h, sessionBody(result));
      },
    },
    {
      method: 'GET',
      path: '/auth/totp',
      options: { id: 'auth.totp', plugins: { gantry: { responses: F.totpState } } },
      handler: async (request, h) => {
        const state = await factors.state(principalOf(request).userId);
        return reply(request, h, {
          enabled: state.twoStep,
          enabledAt: state.twoStepSince,
          recoveryCodesLeft: state.recoveryCodesLeft,
        });
      },
    },
    {
      method: 'POST',
      path: '/auth/totp/setup',
      options: {
        id: 'auth.totp.setup',
        plugins: { gantry: { responses: F.totpSetup, errors: ['CONFLICT'], rateLimit: { limit: 10, windowSec: 60 } } },
      },
      handler: async (request, h) => reply(request, h, await factors.setupTotp(await me(request))),
    },
    {
      method: 'POST',
      path: '/auth/totp/enable',
      options: {
        id: 'auth.totp.enable',
        plugins: { gantry: { responses: F.recoveryCodes, ...codeErrors } },
        validate: { payload: codeBody },
      },
      handler: async (request, h) =>
        reply(request, h, await factors.enableTotp(await me(request), principalOf(request).sessionId, code(request))),
    },
    {
      method: 'DELETE',
      path: '/auth/totp',
      options: {
        id: 'auth.totp.disable',
        plugins: { gantry: { responses: F.totpOff, ...codeErrors } },
        validate: { payload: codeBody },
      },
      handler: async (request, h) => {
        await factors.disableTotp(await me(request), code(request));
        return reply(request, h, { status: 'two_step_off' as const });
      },
    },
    {
      method: 'POST',
      path: '/auth/totp/recovery-codes',
      options: {
        id: 'auth.totp.recovery-codes',
        plugins: { gantry: { responses: F.recoveryCodes, ...codeErrors } },
        validate: { payload: codeBody },
      },
      handler: async (request, h) =>
        reply(request, h, await factors.regenerateRecoveryCodes(await me(request), code(request))),
    },
    {
      method: 'POST',
      path: '/auth/step-up/options',
      options: {
        id: 'auth.step-up.options',
        plugins: {
          gantry: { responses: F.options, errors: ['CONFLICT', 'NOT_CONFIGURED'], rateLimit: limits.passkeys },
        },
      },
      handler: async (request, h) =>
        reply(request, h, await identity.passkeys.authenticationOptions(principalOf(request).userId)),
    },
    {
      method: 'POST',
      path: '/auth/step-up',
      options: {
        id: 'auth.step-up',
        plugins: {
          gantry: {
            responses: F.stepUp,
            errors: ['FORBIDDEN', 'CONFLICT', 'NOT_CONFIGURED'],
            rateLimit: limits.secondFactor,
          },
        },
        validate: { payload: stepUpBody },
      },
      handler: async (request, h) => {
        const principal = principalOf(request);
        const body = request.payload as { code?: string; credential?: unknown };
        return reply(request, h, await factors.stepUp(principal.userId, principal.sessionId, answerOf(body)));
      },
    },
  ];
}
