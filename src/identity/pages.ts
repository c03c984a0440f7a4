import { htmlPage, PAGE_ERRORS } from '../http/openapi/declare.js';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../http/plugin.js';
import { DomainError } from '../http/errors.js';
import { htmlErrorFormat } from '../http/html.js';
import { escapeHtml as escape } from '../http/html.js';

/**
 * The two small pages the mails link to (docs/interface.md, Sign-in API: links point at Gantry's own pages).
 * Server-rendered, no JavaScript. Opening a link (GET) only shows a form: mail scanners
 * that prefetch links must not use up the secret; the POST does the work.
 */

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escape(title)} - Gantry</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem}.error{color:#a00}</style></head>
<body><h1>${escape(title)}</h1>${body}</body></html>`;
}

/** HTML with the headers every Gantry page sends: never framed, never cached. */
function page(h: ResponseToolkit, status: number, title: string, body: string) {
  return h
    .response(layout(title, body))
    .code(status)
    .type('text/html; charset=utf-8')
    .header('X-Frame-Options', 'DENY')
    .header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
    .header('Cache-Control', 'no-store');
}

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
  const pageConfig = (rateLimit: { limit: number; windowSec: number } | false) => ({
    auth: false as const,
    plugins: {
      gantry: {
        errorFormat: htmlErrorFormat,
        rateLimit,
        responses: htmlPage('A sign-in flow page'),
        errors: PAGE_ERRORS,
      },
    },
  });

  const confirmForm = (token: string) =>
    `<p>Confirm this email address for the Gantry account that was registered with it. Only confirm if you created that account; if you did not, close this page.</p>
<form method="post" action="/auth/confirm-email"><input type="hidden" name="token" value="${escape(token)}"><button type="submit">Confirm my email</button></form>`;

  const resetForm = (email: string, code: string, error = '') =>
    `${error ? `<p class="error">${escape(error)}</p>` : ''}<form method="post" action="/auth/reset-password">
<label for="email">Email</label><input id="email" name="email" type="email" required value="${escape(email)}" autocomplete="username">
<label for="code">Code from the mail</label><input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" required value="${escape(code)}" autocomplete="one-time-code">
<label for="password">New password (8 or more characters)</label><input id="password" name="password" type="password" minlength="8" maxlength="128" required autocomplete="new-password">
<button type="submit">Set new password</button></form>`;

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
      options: { id: 'page.confirm-email.submit', ...pageConfig({ limit: 5, windowSec: 300 }) },
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
        page(h, 200, 'Choose a new password', resetForm(field(request.query.email), field(request.query.code))),
    },
    {
      method: 'POST',
      path: '/auth/reset-password',
      options: { id: 'page.reset-password.submit', ...pageConfig({ limit: 5, windowSec: 300 }) },
      handler: async (request: Request, h: ResponseToolkit) => {
        const form = (request.payload as Record<string, unknown> | null) ?? {};
        const email = field(form.email).toLowerCase();
        const code = field(form.code);
        const password = typeof form.password === 'string' ? form.password : '';
        if (password.length < 8 || password.length > 128)
          return page(
            h,
            400,
            'Choose a new password',
            resetForm(email, code, 'The password needs 8 to 128 characters.'),
          );
        if (!/^\d{6}$/.test(code))
          return page(
            h,
            400,
            'Choose a new password',
            resetForm(email, '', 'The code is the six digits from the mail.'),
          );
        try {
          const { resetToken } = await flows.exchangeRecoveryCode(email, code);
          await flows.resetPassword(resetToken, password);
        } catch (err) {
          if (!(err instanceof DomainError) || err.status >= 500) throw err;
          return page(h, err.status, 'Choose a new password', resetForm(email, '', err.message));
        }
        return page(
          h,
          200,
          'Password changed',
          '<p>Your password is changed and every session was signed out. Sign in again with the new password.</p>',
        );
      },
    },
  ];
}
