import { htmlPage, page as pageAnswer, PAGE_ERRORS } from '../http/openapi/declare.js';
import type { GantryRouteConfig, RateLimitRule } from '../http/route-config.js';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { htmlErrorFormat } from '../http/pages.js';
import { escapeHtml as escape } from '../http/html.js';
import { API } from '../http/paths.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import { SIGN_IN_LIMITS } from './limits.js';
import { emailBody } from './schemas.js';

/**
 * The pages the mails link to (docs/interface.md, Sign-in API: links point at Gantry's own
 * pages), and the form that asks for a password reset mail.
 * Server-rendered, no JavaScript. Opening a link (GET) only shows a form: mail scanners
 * that prefetch links must not use up the secret; the POST does the work.
 */

/** Where the sign-in pages' "Forgot your password?" leads (optionally `?return_to=` an authorize URL). */
export const FORGOT_PASSWORD_PAGE = '/auth/forgot-password';

/** Pages that post only to themselves: form-action 'self' on top of the kernel's page CSP. */
const page = (h: ResponseToolkit, status: number, title: string, body: string) =>
  h.page({ title, body: `<h1>${escape(title)}</h1>\n${body}` }, { status, formActionSelf: true });

/**
 * Where a sign-in continues after a reset: only our own authorize endpoint, never an open
 * redirect (the same rule as the sign-in link's return).
 */
const returnTo = (value: unknown): string =>
  typeof value === 'string' && value.startsWith(`${API}/oauth/authorize?`) && !value.includes('\\') ? value : '';

const field = (value: unknown): string => (typeof value === 'string' ? value.trim().slice(0, 512) : '');

async function outcome(h: ResponseToolkit, title: string, run: () => Promise<string>) {
  try {
    return page(h, 200, title, `<p>${escape(await run())}</p>`);
  } catch (err) {
    if (!(err instanceof DomainError) || err.status >= 500) throw err;
    return page(h, err.status, title, `<p class="error">${escape(err.message)}</p>`);
  }
}

export function identityPages(app: PluginDeps): ServerRoute[] {
  const { flows } = app.services.identity;
  const pageConfig = (
    rateLimit: RateLimitRule | false,
    responses: GantryRouteConfig['responses'] = htmlPage('A sign-in flow page'),
  ) => ({
    auth: false as const,
    plugins: {
      gantry: {
        errorFormat: htmlErrorFormat,
        rateLimit,
        responses,
        errors: PAGE_ERRORS,
      },
    },
  });

  const confirmForm = (token: string) =>
    `<p>Confirm this email address for the Gantry account that was registered with it. Only confirm if you created that account; if you did not, close this page.</p>
<form method="post" action="/auth/confirm-email"><input type="hidden" name="token" value="${escape(token)}">
<div class="actions"><button class="btn btn-primary" type="submit">Confirm my email</button></div></form>`;

  const hiddenReturn = (to: string) => (to ? `<input type="hidden" name="return_to" value="${escape(to)}">\n` : '');
  const alert = (error: string, notice = '') =>
    `${error ? `<p class="error" role="alert">${escape(error)}</p>\n` : ''}${notice ? `<p class="notice" role="status">${escape(notice)}</p>\n` : ''}`;

  const resetForm = (email: string, code: string, error = '', to = '', notice = '') =>
    `${alert(error, notice)}<form method="post" action="/auth/reset-password">
${hiddenReturn(to)}<label for="email">Email</label><input id="email" name="email" type="email" required value="${escape(email)}" autocomplete="username">
<label for="code">Code from the mail</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" required value="${escape(code)}" autocomplete="one-time-code">
<label for="password">New password (8 or more characters)</label><input id="password" name="password" type="password" minlength="8" maxlength="128" required autocomplete="new-password">
<div class="actions"><button class="btn btn-primary" type="submit">Set new password</button></div></form>`;

  /** Asks for the mail with the reset code; a sign-in link is the other way back in. */
  const forgotForm = (email: string, to: string, error = '') =>
    `${alert(error)}<p>Enter the email of your account. We send a six-digit code that lets you choose a new password.</p>
<form method="post" action="${FORGOT_PASSWORD_PAGE}">
${hiddenReturn(to)}<label for="email">Email</label><input id="email" name="email" type="email" required value="${escape(email)}" autocomplete="username">
<div class="actions"><button class="btn btn-primary" type="submit">Email me a reset code</button>${to ? `\n<a class="btn btn-secondary" href="${escape(to)}">Back to sign in</a>` : ''}</div></form>
<p class="muted">No access to a password? The sign-in page can also email you a sign-in link.</p>`;

  return [
    {
      method: 'GET',
      path: '/auth/confirm-email',
      options: { id: 'page.confirm-email', ...pageConfig(false) },
      handler: (request: Request, h: ResponseToolkit) => {
        const token = field(request.query.token);
        if (!token)
          return page(
            h,
            400,
            'Confirm your email',
            '<p class="error">This link is incomplete; open the link from the mail again.</p>',
          );
        return page(h, 200, 'Confirm your email', confirmForm(token));
      },
    },
    {
      method: 'POST',
      path: '/auth/confirm-email',
      options: { id: 'page.confirm-email.submit', ...pageConfig({ limit: 5, windowSec: 300, acrossNodes: true }) },
      handler: (request: Request, h: ResponseToolkit) =>
        outcome(h, 'Confirm your email', async () => {
          const token = field((request.payload as Record<string, unknown> | null)?.token);
          if (token.length < 16)
            throw new DomainError(
              'GONE',
              'This confirmation link is invalid, already used or expired; ask for a new one',
            );
          const user = await flows.confirmEmail(token);
          return `Thank you: ${user.email} is confirmed. You can close this page.`;
        }),
    },
    {
      method: 'GET',
      path: '/auth/reset-password',
      options: { id: 'page.reset-password', ...pageConfig(false) },
      handler: (request: Request, h: ResponseToolkit) =>
        page(
          h,
          200,
          'Choose a new password',
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
        const code = field(form.code);
        const password = typeof form.password === 'string' ? form.password : '';
        const to = returnTo(form.return_to);
        if (password.length < 8 || password.length > 128)
          return page(
            h,
            400,
            'Choose a new password',
            resetForm(email, code, 'The password needs 8 to 128 characters.', to),
          );
        if (!/^\d{6}$/.test(code))
          return page(
            h,
            400,
            'Choose a new password',
            resetForm(email, '', 'The code is the six digits from the mail.', to),
          );
        try {
          const { resetToken } = await flows.exchangeRecoveryCode(email, code);
          await flows.resetPassword(resetToken, password);
        } catch (err) {
          if (!(err instanceof DomainError) || err.status >= 500) throw err;
          return page(h, err.status, 'Choose a new password', resetForm(email, '', err.message, to));
        }
        return page(
          h,
          200,
          'Password changed',
          `<p>Your password is changed and every session was signed out. Sign in again with the new password.</p>${to ? `\n<div class="actions"><a class="btn btn-primary" href="${escape(to)}">Continue signing in</a></div>` : ''}`,
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
          return page(
            h,
            429,
            'Reset your password',
            forgotForm(field(form.email), to, 'Too many attempts. Wait a few minutes, then try again.'),
          ).header('Retry-After', rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string);
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
          'Choose a new password',
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
