import { htmlPage, PAGE_ERRORS } from '../http/openapi/declare.js';
import Joi from 'joi';
import type { ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { htmlErrorFormat } from '../http/pages.js';
import { escapeHtml as escape } from '../http/html.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import { SIGN_IN_LIMITS } from '../identity/limits.js';

/** The invitation pages post only to themselves: form-action 'self' on top of the kernel's page CSP. */
const page = (h: ResponseToolkit, title: string, body: string, status = 200) =>
  h.page({ title, body: `<h1>${escape(title)}</h1>\n${body}` }, { status, formActionSelf: true });

/**
 * The page an invitation mail links to. It does not reveal the invitation (the link is a
 * secret until used); it asks the invitee to sign in, and signing in on it accepts. The API
 * form is POST {base_url}/invitations/accept {token} with the invitee's bearer token.
 */
export function invitationPageRoutes(app: PluginDeps): ServerRoute[] {
  const { identity, accounts } = app.services;
  const pageConfig = {
    gantry: {
      errorFormat: htmlErrorFormat,
      rateLimit: { limit: 15, windowSec: 300 },
      responses: htmlPage('The invitation page: sign in if needed, then accept'),
      errors: PAGE_ERRORS,
    },
  };
  return [
    {
      method: 'GET',
      path: '/invitations/accept',
      options: {
        id: 'invitations.page',
        auth: false,
        plugins: pageConfig,
        validate: {
          query: Joi.object({ token: Joi.string().max(512).allow('') }),
          failAction: (_r, h) => page(h, 'Invitation', '<p>This invitation link is malformed.</p>', 400).takeover(),
        },
      },
      handler: (request, h) => {
        const token = (request.query as { token?: string }).token ?? '';
        if (!token)
          return page(
            h,
            'Invitation',
            '<p>This invitation link is incomplete. Open the link from your invitation email.</p>',
            400,
          );
        return page(
          h,
          'Accept your invitation',
          `<p>You have been invited to join an account on Gantry. Sign in with the email address the invitation was sent to, and the invitation is accepted.</p>
<form method="post" action="/invitations/accept"><input type="hidden" name="token" value="${escape(token)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button class="btn btn-primary" type="submit">Sign in and accept</button></div></form>
<p>No password yet? Register with that email first, then open this link again.</p>`,
        );
      },
    },
    {
      method: 'POST',
      path: '/invitations/accept',
      options: {
        id: 'invitations.page.accept',
        auth: false,
        plugins: pageConfig,
        validate: {
          payload: Joi.object({
            token: Joi.string().min(10).max(512).required(),
            email: Joi.string().max(254).required(),
            password: Joi.string().max(1024).required(),
          }),
          failAction: (_r, h) => page(h, 'Invitation', '<p>Fill in your email and password.</p>', 400).takeover(),
        },
      },
      handler: async (request, h) => {
        const { token, email, password } = request.payload as { token: string; email: string; password: string };
        try {
          // The link first: without a live one the password is never looked at, so the page
          // cannot tell a right password from a wrong one to someone who holds no invitation.
          await accounts.invitations.check(token);
          // This form is another door to sign-in: it spends the login budget.
          const spent = await app.kernel.limiter.charge(rateLimitBucket('auth.login', request), SIGN_IN_LIMITS.login);
          if (!spent.allowed) {
            // The refusing budget's headers, as on the API: X-RateLimit-* from the kernel (which
            // reads request.app.rateLimit), Retry-After from the same decision.
            (request.app as { rateLimit?: RateDecision }).rateLimit = spent;
            const retryAfter = rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string;
            return page(
              h,
              'Invitation not accepted',
              '<p>Too many sign-in attempts. Wait a few minutes, then try again.</p>',
              429,
            ).header('Retry-After', retryAfter);
          }
          const user = await identity.authenticate(email, password);
          const member = await accounts.invitations.accept(user.id, token);
          const account = await accounts.get(member.accountId);
          return page(
            h,
            'Invitation accepted',
            `<p>You are now a member of <strong>${escape(account.displayName ?? account.legalName)}</strong> as ${escape(member.role)}.</p>`,
          );
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          return page(h, 'Invitation not accepted', `<p>${escape(err.message)}</p>`, err.status);
        }
      },
    },
  ];
}
