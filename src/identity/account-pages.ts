import Joi from 'joi';
import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { jsonBody } from '../http/openapi/declare.js';
import { cookie, formField, messagePage, page, pageRoute, redirect } from '../http/page-forms.js';
import type { PageView } from '../http/page-kit.js';
import { SCOPES } from '../oauth/types.js';
import { A, accountCenterPage, recoveryCodesPage, totpSetupPage } from './account-views.js';
import { BROWSER_SESSION_COOKIE, type BrowserSignIn } from './browser-sessions.js';
import { SIGN_IN_LIMITS } from './limits.js';
import { createPageSignIn } from './page-sign-in.js';
import { credentialField, pageWithPasskeys } from './page-factors.js';
import { emailBody } from './schemas.js';
import { qrSvg } from './totp.js';

/** What a finished action says on the account center it returns to (`?done=`): fixed texts, nothing echoed. */
const NOTICES: Record<string, string> = {
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

interface Signed {
  request: Request;
  h: ResponseToolkit;
  session: BrowserSignIn;
  sessionValue: string;
  body: Record<string, unknown>;
}

/**
 * The account center (docs/identity.md, Account center): GET /account and its forms. Behind the
 * pages' browser session (a sign-in form first when there is none), every form bound to it by
 * its CSRF value; each form does one thing and comes back to the page (303) with a fixed notice.
 */
export function accountPages(app: PluginDeps): ServerRoute[] {
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

  return [
    {
      method: 'GET',
      path: A,
      options: { id: 'identity.account', ...pageRoute('The account center, or the sign-in form before it') },
      handler: async (request, h) => {
        const found = await signedIn(request);
        if (!found) return signIn.show(request, h, A, { status: 200 });
        const key = typeof request.query.done === 'string' ? request.query.done : '';
        return render({ h, session: found.session, sessionValue: found.value }, { notice: NOTICES[key] });
      },
    },
    {
      method: 'POST',
      path: A,
      options: {
        id: 'identity.account.sign-in',
        ...pageRoute('Signed in: the account center, or the second step first'),
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 },
      },
      handler: (request, h) => signIn.submit(request, h, A, (request.payload ?? {}) as Record<string, unknown>),
    },
    action(`${A}/name`, 'identity.account.name', async (s) => {
      try {
        await identity.updateFullName(s.session.userId, field(s, 'full_name'));
      } catch (err) {
        return refused(s, err, 'name');
      }
      return done(s.h, 'name');
    }),
    action(`${A}/email`, 'identity.account.email', async (s) => {
      const { value, error } = emailBody.validate({ email: field(s, 'new_email').trim() });
      try {
        if (error) throw new DomainError('VALIDATION_FAILED', 'Enter a valid new email address.');
        await identity.flows.requestEmailChange(s.session.userId, value.email, field(s, 'password'));
      } catch (err) {
        return refused(s, err, 'email');
      }
      return done(s.h, 'email');
    }),
    action(
      `${A}/password`,
      'identity.account.password',
      async (s) => {
        const next = field(s, 'new_password');
        try {
          if (next.length < 8 || next.length > 128)
            throw new DomainError('VALIDATION_FAILED', 'The new password needs 8 to 128 characters.');
          await identity.flows.changePassword(
            s.session.userId,
            s.session.sessionId,
            field(s, 'current_password'),
            next,
          );
        } catch (err) {
          return refused(s, err, 'password');
        }
        return done(s.h, 'password');
      },
      { rateLimit: SIGN_IN_LIMITS.changePassword },
    ),
    action(
      `${A}/passkeys/options`,
      'identity.account.passkey-options',
      async (s) =>
        s.h
          .response({ options: await identity.passkeys.registrationOptions(await me(s)) })
          .type('application/json; charset=utf-8')
          .header('Cache-Control', 'no-store'),
      { json: true, rateLimit: SIGN_IN_LIMITS.passkeys },
    ),
    action(`${A}/passkeys`, 'identity.account.passkey-add', async (s) => {
      const credential = credentialField<RegistrationResponseJSON>(s.body);
      const name = field(s, 'name').trim() || null;
      try {
        if (!credential) throw new DomainError('VALIDATION_FAILED', 'No passkey was received. Try adding it again.');
        if (name && (name.length > 60 || /[\p{Cc}]/u.test(name)))
          throw new DomainError('VALIDATION_FAILED', 'A passkey name is one line of at most 60 characters.');
        await identity.passkeys.register(await me(s), credential, name);
      } catch (err) {
        return refused(s, err);
      }
      return done(s.h, 'passkey-added');
    }),
    action(`${A}/passkeys/{passkeyId}/remove`, 'identity.account.passkey-remove', async (s) => {
      try {
        await identity.passkeys.remove(s.session.userId, String(s.request.params.passkeyId));
      } catch (err) {
        return refused(s, err);
      }
      return done(s.h, 'passkey-removed');
    }),
    action(`${A}/two-step/setup`, 'identity.account.two-step-setup', async (s) => {
      let setup: { secret: string; otpauthUrl: string };
      try {
        setup = await identity.factors.setupTotp(await me(s));
      } catch (err) {
        return refused(s, err);
      }
      const csrf = forms.csrfFor(s.sessionValue, CSRF);
      return showPage(s, totpSetupPage({ csrf, secret: setup.secret, qrSvg: await qrSvg(setup.otpauthUrl) }));
    }),
    action(
      `${A}/two-step/enable`,
      'identity.account.two-step-enable',
      async (s) => {
        const user = await me(s);
        try {
          const { recoveryCodes } = await identity.factors.enableTotp(user, s.session.sessionId, field(s, 'code'));
          return showPage(s, recoveryCodesPage(recoveryCodes, 'Two-step sign-in is on.'));
        } catch (err) {
          const pending = await identity.factors.pendingTotp(user);
          if (!(err instanceof DomainError) || err.status >= 500 || !pending) return refused(s, err);
          const csrf = forms.csrfFor(s.sessionValue, CSRF);
          const message =
            err.code === 'FORBIDDEN' ? 'That code is not right. Enter the code the app shows now.' : err.message;
          const view = totpSetupPage({
            csrf,
            secret: pending.secret,
            qrSvg: await qrSvg(pending.otpauthUrl),
            error: message,
          });
          return showPage(s, view, err.status);
        }
      },
      { rateLimit: SIGN_IN_LIMITS.secondFactor },
    ),
    action(
      `${A}/two-step/disable`,
      'identity.account.two-step-disable',
      async (s) => {
        try {
          await identity.factors.disableTotp(await me(s), field(s, 'code'));
        } catch (err) {
          return refused(s, err, 'two-step-off');
        }
        return done(s.h, 'two-step-off');
      },
      { rateLimit: SIGN_IN_LIMITS.secondFactor },
    ),
    action(
      `${A}/two-step/recovery-codes`,
      'identity.account.recovery-codes',
      async (s) => {
        try {
          const { recoveryCodes } = await identity.factors.regenerateRecoveryCodes(await me(s), field(s, 'code'));
          return showPage(s, recoveryCodesPage(recoveryCodes, 'New recovery codes: the old ones no longer work.'));
        } catch (err) {
          return refused(s, err, 'recovery-codes');
        }
      },
      { rateLimit: SIGN_IN_LIMITS.secondFactor },
    ),
    action(`${A}/sessions/{sessionId}/end`, 'identity.account.session-end', async (s) => {
      const id = String(s.request.params.sessionId);
      try {
        await identity.sessions.endOwn(s.session.userId, id);
      } catch (err) {
        return refused(s, err);
      }
      return id === s.session.sessionId ? signedOut(s.h) : done(s.h, 'session-ended');
    }),
    action(`${A}/apps/revoke`, 'identity.account.app-revoke', async (s) => {
      try {
        await oauth.revokeClientGrant(s.session.userId, field(s, 'client_id'));
      } catch (err) {
        return refused(s, err);
      }
      return done(s.h, 'app-revoked');
    }),
    action(`${A}/sign-out`, 'identity.account.sign-out', async (s) => {
      await identity.browserSessions.end(s.sessionValue);
      return signedOut(s.h);
    }),
  ];
}
