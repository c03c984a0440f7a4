import Joi from 'joi';
import { ACCOUNT_PAGE } from './page-paths.js';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { escapeHtml as escape } from '../http/html.js';
import { content, jsonBody } from '../http/openapi/declare.js';
import { cookie, formField, messagePage, page, pageRoute, PRE_SESSION_COOKIE } from '../http/page-forms.js';
import { sha256Hex } from '../lib/crypto.js';
import type { RateLimitRule } from '../http/route-config.js';
import { SIGN_IN_LIMITS } from './limits.js';
import {
  credentialField,
  localPath,
  PASSKEY_SIGN_IN_CSRF,
  PASSKEY_SIGN_IN_PATH,
  pageWithPasskeys,
  SECOND_STEP_CSRF,
  SECOND_STEP_PATH,
  secondStepView,
  signInBrowser,
} from './page-factors.js';

const refusedForm = () =>
  messagePage('This form cannot be accepted', 'It has expired or was not sent from this page. Go back and try again.');

/** Options of a ceremony for the passkey script: JSON, never cached. */
const optionsAnswer = (h: ResponseToolkit, options: unknown) =>
  h.response({ options }).type('application/json; charset=utf-8').header('Cache-Control', 'no-store');

/**
 * The second step of a page sign-in and "Sign in with a passkey" (docs/identity.md, Pages), with
 * the passkey script files. Every form here is bound to the browser's pre-session cookie.
 */
export function factorPages(app: PluginDeps): ServerRoute[] {
  const { identity } = app.services;
  const forms = app.kernel.pageForms;
  const pre = (request: Request) => cookie(request, PRE_SESSION_COOKIE);
  const body = (request: Request) => (request.payload ?? {}) as Record<string, unknown>;
  const formOptions = (id: string, description: string, rateLimit: RateLimitRule = SIGN_IN_LIMITS.secondFactor) => {
    const base = pageRoute(description);
    return {
      id,
      ...base,
      plugins: { gantry: { ...base.plugins.gantry, rateLimit } },
      payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 32 * 1024 },
    };
  };
  const jsonOptions = (id: string) => {
    const options = formOptions(id, 'Passkey options', SIGN_IN_LIMITS.passkeys);
    return {
      ...options,
      plugins: {
        gantry: {
          ...options.plugins.gantry,
          responses: { 200: jsonBody(Joi.object({ options: Joi.object().unknown(true) }), 'WebAuthn options') },
        },
      },
    };
  };

  /** The pending second step of this browser: its user, or null when unknown, used, expired or another browser's. */
  async function pendingOf(request: Request, mfaToken: string) {
    const preValue = pre(request);
    const pending = mfaToken ? await identity.factors.peekSecondStep(mfaToken) : null;
    if (!pending?.userId || !preValue || pending.payload.browser !== sha256Hex(preValue)) return null;
    return { userId: pending.userId };
  }

  const expired = (h: ResponseToolkit) =>
    page(
      h,
      {
        title: 'Sign-in expired',
        body: `<h1>This sign-in has expired</h1>\n<p>Sign in again: the code form lasts 5 minutes and allows 5 tries.</p>\n<div class="actions"><a class="btn btn-primary" href="${ACCOUNT_PAGE}">Sign in again</a></div>`,
      },
      401,
    );

  return [
    ...identity.passkeyAssets().files.map(
      (file): ServerRoute => ({
        method: 'GET',
        path: file.path,
        options: {
          id: `identity.asset.${file.path.split('/')[2].split('.')[0]}`,
          auth: false,
          plugins: { gantry: { rateLimit: false, responses: { 200: content('text/javascript', 'A page script') } } },
        },
        handler: (_request, h) =>
          h
            .response(file.body)
            .type('text/javascript; charset=utf-8')
            .header('Cache-Control', 'public, max-age=31536000, immutable'),
      }),
    ),
    {
      method: 'POST',
      path: SECOND_STEP_PATH,
      options: formOptions(
        'identity.two-step',
        'The second step of a sign-in: on to where it began, or the form again',
      ),
      handler: async (request, h) => {
        const form = body(request);
        const preValue = pre(request);
        if (!forms.csrfMatches(preValue, SECOND_STEP_CSRF, form.csrf)) return page(h, refusedForm(), 403);
        const mfaToken = formField(form, 'mfa_token') ?? '';
        const pending = await pendingOf(request, mfaToken);
        if (!pending) return expired(h);
        const again = async (status: number, error: string) => {
          const { methods } = await identity.factors.state(pending.userId);
          const view = secondStepView({ mfaToken, methods, csrf: form.csrf as string, error });
          return pageWithPasskeys(app, h, view, status, methods.includes('passkey'));
        };
        const passkey = credentialField(form);
        const code = (formField(form, 'code') ?? '').trim();
        if (!passkey && !code) return again(400, 'Enter the code from your authenticator app, or a recovery code.');
        try {
          const done = await identity.factors.completeSecondStep(
            mfaToken,
            passkey ? { passkey } : { code },
            sha256Hex(preValue!),
          );
          // A second step after an SSO sign-in opens a session of that IdP (docs/identity-providers.md, Removal).
          const idpId = typeof done.payload.idpId === 'string' ? done.payload.idpId : null;
          return signInBrowser(
            app,
            request,
            h,
            done.userId,
            localPath(done.payload.returnTo) ?? ACCOUNT_PAGE,
            true,
            idpId,
          );
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          if (err.code === 'INVALID_CREDENTIALS')
            return (await pendingOf(request, mfaToken))
              ? again(401, passkey ? 'The passkey could not be verified.' : 'That code is wrong or was already used.')
              : expired(h);
          if (err.code === 'RATE_LIMIT_EXCEEDED') {
            const res = await again(
              429,
              'Too many codes were tried for this account. Wait a few minutes, then try again.',
            );
            return res.header('Retry-After', err.headers['Retry-After'] ?? '300');
          }
          if (err.code === 'UNAUTHORIZED') return expired(h);
          throw err;
        }
      },
    },
    {
      method: 'POST',
      path: `${SECOND_STEP_PATH}/passkey-options`,
      options: jsonOptions('identity.two-step.passkey-options'),
      handler: async (request, h) => {
        const form = body(request);
        if (!forms.csrfMatches(pre(request), SECOND_STEP_CSRF, form.csrf)) return page(h, refusedForm(), 403);
        const pending = await pendingOf(request, formField(form, 'mfa_token') ?? '');
        if (!pending) return expired(h);
        return optionsAnswer(h, await identity.passkeys.authenticationOptions(pending.userId));
      },
    },
    {
      method: 'POST',
      path: `${PASSKEY_SIGN_IN_PATH}/options`,
      options: jsonOptions('identity.passkey.options'),
      handler: async (request, h) => {
        if (!forms.csrfMatches(pre(request), PASSKEY_SIGN_IN_CSRF, body(request).csrf))
          return page(h, refusedForm(), 403);
        return optionsAnswer(h, await identity.passkeys.authenticationOptions(null));
      },
    },
    {
      method: 'POST',
      path: PASSKEY_SIGN_IN_PATH,
      options: formOptions('identity.passkey', 'Signed in with a passkey: on to where it began', SIGN_IN_LIMITS.login),
      handler: async (request, h) => {
        const form = body(request);
        if (!forms.csrfMatches(pre(request), PASSKEY_SIGN_IN_CSRF, form.csrf)) return page(h, refusedForm(), 403);
        const returnTo = localPath(form.return_to) ?? ACCOUNT_PAGE;
        const passkey = credentialField(form);
        let userId: string | null = null;
        try {
          if (passkey) userId = await identity.passkeys.authenticate(passkey, null);
        } catch (err) {
          if (!(err instanceof DomainError) || err.status !== 401) throw err;
        }
        if (!userId)
          return page(
            h,
            {
              title: 'Sign in',
              body: `<h1>The passkey could not be verified</h1>\n<p>It may belong to another site, or have been removed from your account. Sign in another way.</p>\n<div class="actions"><a class="btn btn-primary" href="${escape(returnTo)}">Back to sign in</a></div>`,
            },
            401,
          );
        return signInBrowser(app, request, h, userId, returnTo, true);
      },
    },
  ];
}
