import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { DomainError } from '../http/errors.js';
import { escapeHtml as escape } from '../http/html.js';
import { htmlPage, page as pageAnswer } from '../http/openapi/declare.js';
import { tooManyAttempts } from '../http/page-words.js';
import { nextStep } from '../http/page-forms.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import type { PluginDeps } from '../services.js';
import { ACCOUNT_PAGE, RESEND_CONFIRMATION_PAGE } from './page-paths.js';
import { SIGN_IN_LIMITS } from './limits.js';
import { alerts, field, identityPage as page, identityPageConfig as pageConfig } from './page-parts.js';
import { emailBody } from './schemas.js';

/**
 * The page a confirmation mail links to, and the form that mails a new link (docs/interface.md,
 * Sign-in API). Opening the link only shows a button (mail scanners prefetch links); the POST
 * confirms. A link that no longer works offers the form for a new one on the spot.
 */
export function confirmEmailPages(app: PluginDeps): ServerRoute[] {
  const { flows } = app.services.identity;
  const brand = app.kernel.config.brand.name;

  const confirmForm = (token: string) =>
    `<p>Confirm this email address for the ${escape(brand)} account that was registered with it. Only confirm if you created that account; if you did not, close this page.</p>
<form method="post" action="/auth/confirm-email"><input type="hidden" name="token" value="${escape(token)}">
<div class="actions"><button class="btn btn-primary" type="submit">Confirm my email</button></div></form>`;

  /** Asks for a new confirmation link: the answer is the same whether the address is known. */
  const resendForm = (email = '', error = '') =>
    `${alerts(error)}<form method="post" action="${RESEND_CONFIRMATION_PAGE}">
<label for="email">Your email</label><input id="email" name="email" type="email" required value="${escape(email)}" autocomplete="username">
<div class="actions"><button class="btn btn-primary" type="submit">Email me a new confirmation link</button></div></form>
<p class="muted next">Already confirmed? <a href="${ACCOUNT_PAGE}">Sign in to your account</a>.</p>`;

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
            `<p class="error" role="alert">This link is incomplete. Open the link from the mail again, or ask for a new one.</p>\n${resendForm()}`,
          );
        return page(h, 200, 'Confirm your email', confirmForm(token));
      },
    },
    {
      method: 'POST',
      path: '/auth/confirm-email',
      options: { id: 'page.confirm-email.submit', ...pageConfig({ limit: 5, windowSec: 300, acrossNodes: true }) },
      handler: async (request: Request, h: ResponseToolkit) => {
        const token = field((request.payload as Record<string, unknown> | null)?.token);
        try {
          if (token.length < 16) throw new DomainError('GONE', 'unusable link');
          const user = await flows.confirmEmail(token);
          return page(
            h,
            200,
            'Email confirmed',
            `<p>Thank you: <strong>${escape(user.email)}</strong> is confirmed.</p>
${nextStep({ href: ACCOUNT_PAGE, label: 'Continue to your account' }, { href: '/', label: 'Go to the home page' })}`,
          );
        } catch (err) {
          if (!(err instanceof DomainError) || err.status >= 500) throw err;
          if (err.code === 'GONE')
            return page(
              h,
              410,
              'This link cannot be used',
              `<p class="error" role="alert">This confirmation link is invalid, already used or expired. A link works once, for 24 hours, and a newer one replaces it.</p>\n${resendForm()}`,
            );
          // The new address of an email change is now someone else's (409).
          return page(
            h,
            err.status,
            'Email not changed',
            `<p class="error" role="alert">${escape(err.message)}.</p>\n${nextStep({ href: ACCOUNT_PAGE, label: 'Go to your account' })}`,
          );
        }
      },
    },
    {
      method: 'GET',
      path: RESEND_CONFIRMATION_PAGE,
      options: { id: 'page.resend-confirmation', ...pageConfig(false) },
      handler: (_request: Request, h: ResponseToolkit) =>
        page(
          h,
          200,
          'Confirm your email',
          `<p>Enter the email you registered with. We send a new link that confirms it.</p>\n${resendForm()}`,
        ),
    },
    {
      method: 'POST',
      path: RESEND_CONFIRMATION_PAGE,
      options: {
        id: 'page.resend-confirmation.submit',
        ...pageConfig(
          { limit: 20, windowSec: 60 },
          { ...htmlPage('The form again, with what to correct'), 202: pageAnswer('Sent if the address waits for one') },
        ),
      },
      handler: async (request: Request, h: ResponseToolkit) => {
        const email = field((request.payload as Record<string, unknown> | null)?.email);
        // Another door to POST /api/v1/auth/resend-confirmation: it spends the same budget.
        const spent = await app.kernel.limiter.charge(
          rateLimitBucket('auth.resend-confirmation', request),
          SIGN_IN_LIMITS.resendConfirmation,
        );
        if (!spent.allowed) {
          (request.app as { rateLimit?: RateDecision }).rateLimit = spent;
          const retryAfter = rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string;
          return page(h, 429, 'Confirm your email', resendForm(email, tooManyAttempts(Number(retryAfter)))).header(
            'Retry-After',
            retryAfter,
          );
        }
        const { value, error } = emailBody.validate({ email });
        if (error) return page(h, 400, 'Confirm your email', resendForm(email, 'Enter the email you registered with.'));
        await flows.resendConfirmation(value.email);
        return page(
          h,
          202,
          'Check your mail',
          `<p class="notice" role="status">If this address has an account waiting for confirmation, a new link is on its way. It works once, for 24 hours.</p>
${nextStep({ href: '/', label: 'Go to the home page' })}`,
        );
      },
    },
  ];
}
