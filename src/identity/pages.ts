import { htmlPage, page as pageAnswer } from '../http/openapi/declare.js';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { escapeHtml as escape } from '../http/html.js';
import { tooManyAttempts } from '../http/page-words.js';
import { nextStep } from '../http/page-forms.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import { confirmEmailPages } from './confirm-pages.js';
import { ACCOUNT_PAGE, FORGOT_PASSWORD_PAGE } from './page-paths.js';
import { SIGN_IN_LIMITS } from './limits.js';
import {
  alerts,
  field,
  hiddenReturn,
  identityPage as page,
  identityPageConfig as pageConfig,
  returnTo,
} from './page-parts.js';
import { emailBody } from './schemas.js';

/**
 * The pages the mails link to (docs/interface.md, Sign-in API: links point at Gantry's own
 * pages), and the form that asks for a password reset mail.
 * Server-rendered, no JavaScript. Opening a link (GET) only shows a form: mail scanners
 * that prefetch links must not use up the secret; the POST does the work. Every page that ends
 * a flow says where to go next (docs/kernel.md, Pages: no dead ends).
 */

/**
 * A code that did not work. It may still work (a typo costs one of its 5 tries), so the page
 * says so rather than "ask for a new one"; the same words whether or not the email has an
 * account, which the page must not tell.
 */
const WRONG_CODE =
  'This code does not match the one we sent. Check the six digits in the newest mail and try again. After 5 wrong tries, or 15 minutes, a code stops working: then send a new one.';

export function identityPages(app: PluginDeps): ServerRoute[] {
  const { flows } = app.services.identity;

  /** The code form; "Send a new code" posts the forgot-password form again with the same email. */
  const resetForm = (email: string, code: string, error = '', to = '', notice = '') =>
    `${alerts(error, notice)}<form method="post" action="/auth/reset-password">
${hiddenReturn(to)}<label for="email">Email</label><input id="email" name="email" type="email" required value="${escape(email)}" autocomplete="username">
<label for="code">Code from the mail</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" required value="${escape(code)}" autocomplete="one-time-code">
<label for="password">New password (8 or more characters)</label><input id="password" name="password" type="password" minlength="8" maxlength="128" required autocomplete="new-password">
<div class="actions"><button class="btn btn-primary" type="submit">Set new password</button></div></form>
${
  email
    ? `<form method="post" action="${FORGOT_PASSWORD_PAGE}">
${hiddenReturn(to)}<input type="hidden" name="email" value="${escape(email)}">
<p class="muted next">No mail, or the code stopped working? <button class="btn-link" type="submit">Send a new code</button></p></form>`
    : `<p class="muted next">No code yet? <a href="${FORGOT_PASSWORD_PAGE}${to ? `?${escape(new URLSearchParams({ return_to: to }).toString())}` : ''}">Ask for one</a>.</p>`
}`;

  /** Asks for the mail with the reset code; a sign-in link is the other way back in. */
  const forgotForm = (email: string, to: string, error = '') =>
    `${alerts(error)}<p>Enter the email of your account. We send a six-digit code that lets you choose a new password.</p>
<form method="post" action="${FORGOT_PASSWORD_PAGE}">
${hiddenReturn(to)}<label for="email">Email</label><input id="email" name="email" type="email" required value="${escape(email)}" autocomplete="username">
<div class="actions"><button class="btn btn-primary" type="submit">Email me a reset code</button>${to ? `\n<a class="btn btn-secondary" href="${escape(to)}">Back to sign in</a>` : ''}</div></form>
<p class="muted">No access to a password? The sign-in page can also email you a sign-in link.</p>`;

  const title = 'Choose a new password';
  return [
    ...confirmEmailPages(app),
    {
      method: 'GET',
      path: '/auth/reset-password',
      options: { id: 'page.reset-password', ...pageConfig(false) },
      handler: (request: Request, h: ResponseToolkit) =>
        page(
          h,
          200,
          title,
          resetForm(field(request.query.email), field(request.query.code), '', returnTo(request.query.return_to)),
        ),
    },
    {
      method: 'POST',
      path: '/auth/reset-password',
      options: { id: 'page.reset-password.submit', ...pageConfig({ limit: 5, windowSec: 300, acrossNodes: true }) },
      handler: async (request: Request, h: ResponseToolkit) => {
        const form = (request.payload as Record<string, unknown> | null) ?? {};
        const email = field(form.email).toLowerCase();
        const code = field(form.code).slice(0, 12);
        const password = typeof form.password === 'string' ? form.password : '';
        const to = returnTo(form.return_to);
        // What was typed stays on the form, the password excepted (never sent back to a page).
        if (password.length < 8 || password.length > 128)
          return page(h, 400, title, resetForm(email, code, 'The password needs 8 to 128 characters.', to));
        if (!/^\d{6}$/.test(code))
          return page(h, 400, title, resetForm(email, code, 'The code is the six digits from the mail.', to));
        try {
          const { resetToken } = await flows.exchangeRecoveryCode(email, code);
          await flows.resetPassword(resetToken, password);
        } catch (err) {
          if (!(err instanceof DomainError) || err.status >= 500) throw err;
          return page(h, err.status, title, resetForm(email, code, err.code === 'GONE' ? WRONG_CODE : err.message, to));
        }
        return page(
          h,
          200,
          'Password changed',
          `<p>Your password is changed and every session was signed out. Sign in again with the new password.</p>
${to ? nextStep({ href: to, label: 'Continue signing in' }) : nextStep({ href: ACCOUNT_PAGE, label: 'Sign in to your account' }, { href: '/', label: 'Go to the home page' })}`,
        );
      },
    },
    {
      method: 'GET',
      path: FORGOT_PASSWORD_PAGE,
      options: { id: 'page.forgot-password', ...pageConfig(false) },
      handler: (request: Request, h: ResponseToolkit) =>
        page(h, 200, 'Reset your password', forgotForm('', returnTo(request.query.return_to))),
    },
    {
      method: 'POST',
      path: FORGOT_PASSWORD_PAGE,
      options: {
        id: 'page.forgot-password.submit',
        ...pageConfig(
          { limit: 20, windowSec: 60 },
          {
            ...htmlPage('The form again, with what to correct'),
            202: pageAnswer('Sent if the address is known: the form for the code from the mail'),
          },
        ),
      },
      handler: async (request: Request, h: ResponseToolkit) => {
        const form = (request.payload as Record<string, unknown> | null) ?? {};
        const to = returnTo(form.return_to);
        // This form is another door to POST /api/v1/auth/forgot-password: it spends the same budget.
        const spent = await app.kernel.limiter.charge(
          rateLimitBucket('auth.forgot-password', request),
          SIGN_IN_LIMITS.forgotPassword,
        );
        if (!spent.allowed) {
          (request.app as { rateLimit?: RateDecision }).rateLimit = spent;
          const retryAfter = rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string;
          return page(
            h,
            429,
            'Reset your password',
            forgotForm(field(form.email), to, tooManyAttempts(Number(retryAfter))),
          ).header('Retry-After', retryAfter);
        }
        const { value, error } = emailBody.validate({ email: field(form.email) });
        if (error)
          return page(
            h,
            400,
            'Reset your password',
            forgotForm(field(form.email), to, 'Enter the email of your account.'),
          );
        await flows.forgotPassword(value.email);
        return page(
          h,
          202,
          title,
          resetForm(
            value.email,
            '',
            '',
            to,
            'If an account exists for this email, a six-digit code is on its way. It works once, for 15 minutes.',
          ),
        );
      },
    },
  ];
}
