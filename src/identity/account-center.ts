import Joi from 'joi';
import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { jsonBody } from '../http/openapi/declare.js';
import { cookie, formField, messagePage, page, pageRoute, redirect } from '../http/page-forms.js';
import type { PageView } from '../http/page-kit.js';
import { SCOPES } from '../oauth/types.js';
import { A, accountCenterPage } from './account-views.js';
import { BROWSER_SESSION_COOKIE, type BrowserSignIn } from './browser-sessions.js';
import { createPageSignIn } from './page-sign-in.js';
import { pageWithPasskeys } from './page-factors.js';

/** What a finished action says on the account center it returns to (`?done=`): fixed texts, nothing echoed. */
export const NOTICES: Record<string, string> = {
  name: 'Your name is saved.',
  email: 'A confirmation link is on its way to the new address. Your email changes when it is opened.',
  password: 'Your password is changed. Your other sessions were signed out.',
  'passkey-added': 'The passkey is added.',
  'passkey-removed': 'The passkey is removed.',
  'two-step-off': 'Two-step sign-in is off.',
  'session-ended': 'The session is ended.',
  'app-revoked': 'The app no longer has access to your account.',
};
const CSRF = 'account';

export interface Signed {
  request: Request;
  h: ResponseToolkit;
  session: BrowserSignIn;
  sessionValue: string;
  body: Record<string, unknown>;
}

/**
 * What the account center's routes share (account-pages.ts, account-factor-pages.ts): the
 * pages' browser session (a sign-in form first when there is none), the page rendered with a
 * notice or a refusal, and `action`, a form POST bound to the session by its CSRF value that
 * does one thing and comes back to the page (303) with a fixed notice.
 */
export function createAccountCenter(app: PluginDeps) {
  const { identity, oauth } = app.services;
  const forms = app.kernel.pageForms;
  const signIn = createPageSignIn(app, 'Sign in to your account');
  const signedIn = async (request: Request) => {
    const value = cookie(request, BROWSER_SESSION_COOKIE);
    const session = await identity.browserSessions.signInOf(value);
    return session && value ? { session, value } : null;
  };

  async function render(
    s: Pick<Signed, 'h' | 'session' | 'sessionValue'>,
    extra: { notice?: string; error?: string; open?: string } = {},
    status = 200,
  ): Promise<ResponseObject> {
    const { userId, sessionId } = s.session;
    const [user, state, passkeys, sessions, apps] = await Promise.all([
      identity.getUser(userId),
      identity.factors.state(userId),
      identity.passkeys.list(userId),
      identity.sessions.listLive(userId, sessionId),
      oauth.listGrants(userId),
    ]);
    const view = accountCenterPage({
      user,
      csrf: forms.csrfFor(s.sessionValue, CSRF),
      ...extra,
      twoStep: { on: state.twoStep, since: state.twoStepSince, recoveryCodesLeft: state.recoveryCodesLeft },
      passkeys,
      passkeySupport: identity.passkeys.support,
      sessions,
      apps,
      scopeWords: SCOPES,
    });
    return pageWithPasskeys(app, s.h, view, status, identity.passkeys.support.available);
  }

  /** A refusal of a service as the account center with the message (the form it is about open); anything else is the server's. */
  async function refused(s: Signed, err: unknown, open?: string) {
    if (!(err instanceof DomainError) || err.status >= 500) throw err;
    const res = await render(s, { error: err.message, open }, err.status);
    return err.headers['Retry-After'] ? res.header('Retry-After', err.headers['Retry-After']) : res;
  }

  const done = (h: ResponseToolkit, key: keyof typeof NOTICES) => redirect(h, `${A}?done=${key}`, 303);
  const signedOut = (h: ResponseToolkit) =>
    page(h, {
      title: 'Signed out',
      body: `<h1>You are signed out</h1>\n<p>This browser is no longer signed in.</p>\n<div class="actions"><a class="btn btn-primary" href="${A}">Sign in again</a></div>`,
    }).header('Set-Cookie', `${BROWSER_SESSION_COOKIE}=; ${forms.attrs(0)}`);
  const showPage = (s: Signed, view: PageView, status = 200) => page(s.h, view, status);
  const field = (s: Signed, name: string) => formField(s.body, name) ?? '';

  /** A POST of the signed-in account center: session and CSRF checked, then `run`. */
  const action = (
    path: string,
    id: string,
    run: (s: Signed) => Promise<ResponseObject>,
    options: { json?: boolean; rateLimit?: { limit: number; windowSec: number; acrossNodes?: boolean } } = {},
  ): ServerRoute => {
    const base = pageRoute('The account center after a change, or a step of one');
    return {
      method: 'POST',
      path,
      options: {
        id,
        ...base,
        plugins: {
          gantry: {
            ...base.plugins.gantry,
            rateLimit: options.rateLimit ?? { limit: 30, windowSec: 60 },
            ...(options.json && {
              responses: { 200: jsonBody(Joi.object({ options: Joi.object().unknown(true) }), 'WebAuthn options') },
            }),
          },
        },
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 32 * 1024 },
      },
      handler: async (request, h) => {
        const found = await signedIn(request);
        if (!found) return signIn.show(request, h, A, { error: 'Your session has ended. Sign in again.' });
        const body = (request.payload ?? {}) as Record<string, unknown>;
        if (!forms.csrfMatches(found.value, CSRF, body.csrf))
          return page(
            h,
            messagePage(
              'This form cannot be accepted',
              'It has expired or was not sent from this page. Go back and try again.',
            ),
            403,
          );
        return run({ request, h, session: found.session, sessionValue: found.value, body });
      },
    };
  };

  const me = (s: Signed) => identity.getUser(s.session.userId);
  const csrf = (s: Pick<Signed, 'sessionValue'>) => forms.csrfFor(s.sessionValue, CSRF);

  return { signIn, signedIn, render, refused, done, signedOut, showPage, field, action, me, csrf };
}

export type AccountCenter = ReturnType<typeof createAccountCenter>;
