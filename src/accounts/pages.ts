import { htmlPage, PAGE_ERRORS } from '../http/openapi/declare.js';
import Joi from 'joi';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { htmlErrorFormat } from '../http/pages.js';
import { escapeHtml as escape } from '../http/html.js';
import { cookie, formField, messagePage, PRE_SESSION_COOKIE, type PageLink } from '../http/page-forms.js';
import type { PageView } from '../http/page-kit.js';
import { tooManyAttempts } from '../http/page-words.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import { BROWSER_SESSION_COOKIE, BROWSER_SESSION_TTL_SEC } from '../identity/browser-sessions.js';
import { SIGN_IN_LIMITS } from '../identity/limits.js';
import { ACCOUNT_PAGE, RESEND_CONFIRMATION_PAGE } from '../identity/page-paths.js';
import { createPageSignIn } from '../identity/page-sign-in.js';
import type { InvitationSummary } from './invitation-acceptance.js';
import {
  acceptedView,
  acceptView,
  goneView,
  invitationIntro,
  invitationPath,
  otherUserNote,
  registerView,
} from './invitation-views.js';

const REGISTER_CSRF = 'invitation-register';

/** The invitation's own pages post only to themselves: form-action 'self' on top of the kernel's page CSP. */
const page = (h: ResponseToolkit, view: PageView, status = 200) =>
  h.page(view, { status, formActionSelf: true }).header('Pragma', 'no-cache');
const ACCEPT_CSRF = 'invitation-accept';

/**
 * The page an invitation mail links to (docs/accounts.md, Invitation: the page). A live link
 * names the account, the inviter and the role; then the invitee signs in (identity's page
 * sign-in, with its budget and whatever it asks), or registers with the invited address when no
 * user has it, or, signed in, accepts with one button. A used or expired link tells nothing but
 * that. The API form is POST {base_url}/invitations/accept {token} with the invitee's bearer token.
 */
export function invitationPageRoutes(app: PluginDeps): ServerRoute[] {
  const { identity, accounts } = app.services;
  const forms = app.kernel.pageForms;
  const { brand: brandConfig, webUrl, publicUrl } = app.kernel.config;
  const brand = brandConfig.name;
  const home: PageLink = { href: '/', label: 'Go to the home page' };
  const yourAccount: PageLink = { href: ACCOUNT_PAGE, label: 'Go to your account' };
  // The operator's own web application, when it has one (GANTRY_WEB_URL), is where a new member goes on.
  const onwards: PageLink[] =
    webUrl !== publicUrl ? [{ href: webUrl, label: `Continue to ${brand}` }, yourAccount] : [yourAccount, home];
  const pageConfig = {
    gantry: {
      errorFormat: htmlErrorFormat,
      rateLimit: { limit: 15, windowSec: 300 },
      responses: htmlPage('The invitation page: sign in or register, then accept'),
      errors: PAGE_ERRORS,
    },
  };
  const tokenOf = (request: Request) =>
    (request.query as { token?: string }).token ??
    formField((request.payload ?? {}) as Record<string, unknown>, 'token') ??
    '';
  const signInFor = (s: InvitationSummary, note = '') =>
    createPageSignIn(
      app,
      `Join ${s.accountName}`,
      `${invitationIntro(s, brand)}\n${note}<p>Sign in as <strong>${escape(s.email)}</strong> to accept.</p>`,
    );
  const session = async (request: Request) => {
    const value = cookie(request, BROWSER_SESSION_COOKIE);
    const userId = await identity.browserSessions.userOf(value);
    return userId && value ? { userId, value, user: await identity.getUser(userId) } : null;
  };

  /** The register form, with the pre-session cookie its CSRF value is bound to. */
  function register(
    request: Request,
    h: ResponseToolkit,
    token: string,
    s: InvitationSummary,
    extra: { status?: number; error?: string; fullName?: string; note?: string } = {},
  ) {
    const pre = forms.preSession(request);
    const csrf = forms.csrfFor(pre.value, REGISTER_CSRF);
    const res = page(h, registerView({ summary: s, brand, token, csrf, ...extra }), extra.status ?? 200);
    return pre.setCookie ? res.header('Set-Cookie', pre.setCookie, { append: true }) : res;
  }

  /** What the link shows to this browser: accept, sign in, or register. */
  async function show(
    request: Request,
    h: ResponseToolkit,
    token: string,
    s: InvitationSummary,
    error = '',
    status = 200,
  ) {
    const current = await session(request);
    if (current && current.user.email === s.email)
      return page(
        h,
        acceptView({ summary: s, brand, token, csrf: forms.csrfFor(current.value, ACCEPT_CSRF), error }),
        status,
      );
    const note = current ? otherUserNote(current.user.email, s) : '';
    if (!s.userExists) return register(request, h, token, s, { note, error, status });
    return signInFor(s, note).show(request, h, invitationPath(token), { status, email: s.email, error });
  }

  async function submitRegister(
    request: Request,
    h: ResponseToolkit,
    token: string,
    s: InvitationSummary,
    body: Record<string, unknown>,
  ) {
    const fullName = (formField(body, 'full_name') ?? '').trim().slice(0, 180);
    if (!forms.csrfMatches(cookie(request, PRE_SESSION_COOKIE), REGISTER_CSRF, body.csrf))
      return register(request, h, token, s, {
        status: 403,
        fullName,
        error: 'This form has expired. Choose your password again.',
      });
    // Another door to POST /api/v1/auth/register: it spends the same budget.
    const spent = await app.kernel.limiter.charge(rateLimitBucket('auth.register', request), SIGN_IN_LIMITS.register);
    if (!spent.allowed) {
      (request.app as { rateLimit?: RateDecision }).rateLimit = spent;
      const retryAfter = rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string;
      return register(request, h, token, s, {
        status: 429,
        fullName,
        error: tooManyAttempts(Number(retryAfter)),
      }).header('Retry-After', retryAfter);
    }
    const password = formField(body, 'password') ?? '';
    if (password.length < 8 || password.length > 128)
      return register(request, h, token, s, {
        status: 400,
        fullName,
        error: 'The password needs 8 to 128 characters.',
      });
    try {
      const { userId, member } = await accounts.invitations.register(token, { password, fullName: fullName || null });
      const sessionValue = await identity.browserSessions.start(userId);
      return page(h, acceptedView(s.accountName, member.role, onwards)).header(
        'Set-Cookie',
        `${BROWSER_SESSION_COOKIE}=${sessionValue}; ${forms.attrs(BROWSER_SESSION_TTL_SEC)}`,
      );
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      if (err.status === 410) return page(h, goneView([home]), 410);
      if (err.status === 409)
        return signInFor({ ...s, userExists: true }).show(request, h, invitationPath(token), {
          status: 409,
          email: s.email,
          error: `${err.message}.`,
        });
      return register(request, h, token, s, { status: err.status, fullName, error: `${err.message}.` });
    }
  }

  async function submitAccept(
    request: Request,
    h: ResponseToolkit,
    token: string,
    s: InvitationSummary,
    body: Record<string, unknown>,
  ) {
    const current = await session(request);
    if (!current) return show(request, h, token, s, 'Your session has ended. Sign in again.', 401);
    if (!forms.csrfMatches(current.value, ACCEPT_CSRF, body.csrf))
      return show(request, h, token, s, 'This form has expired. Try again.', 403);
    try {
      const member = await accounts.invitations.accept(current.userId, token);
      return page(h, acceptedView(s.accountName, member.role, onwards));
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      if (err.status === 410) return page(h, goneView([home]), 410);
      if (err.status === 409)
        return page(h, messagePage('Already a member', `You are already a member of ${s.accountName}.`, onwards), 409);
      const unconfirmed = (err.details as Array<{ type?: string }> | undefined)?.some(
        (d) => d.type === 'email_not_confirmed',
      );
      const remedy = unconfirmed
        ? `<p><a href="${RESEND_CONFIRMATION_PAGE}">Email me a new confirmation link</a></p>\n`
        : '';
      const csrf = forms.csrfFor(current.value, ACCEPT_CSRF);
      return page(h, acceptView({ summary: s, brand, token, csrf, error: `${err.message}.`, remedy }), err.status);
    }
  }

  /** The summary of a live link, or the page that says it is not one. */
  async function summaryOr(h: ResponseToolkit, token: string) {
    try {
      return { summary: await accounts.invitations.describe(token) };
    } catch (err) {
      if (err instanceof DomainError && (err.status === 410 || err.status === 404))
        return { answer: page(h, goneView([home]), 410) };
      throw err;
    }
  }

  const malformed = (h: ResponseToolkit) =>
    page(
      h,
      messagePage(
        'This invitation link is incomplete',
        'Open the link from your invitation email again: it may have been cut in two.',
        [home],
      ),
      400,
    );
  const tokenQuery = Joi.object({ token: Joi.string().max(512).allow('') });
  return [
    {
      method: 'GET',
      path: '/invitations/accept',
      options: {
        id: 'invitations.page',
        auth: false,
        plugins: pageConfig,
        validate: { query: tokenQuery, failAction: (_r, h) => malformed(h).takeover() },
      },
      handler: async (request, h) => {
        const token = tokenOf(request);
        if (!token) return malformed(h);
        const { summary, answer } = await summaryOr(h, token);
        return summary ? show(request, h, token, summary) : answer;
      },
    },
    {
      method: 'POST',
      path: '/invitations/accept',
      options: {
        id: 'invitations.page.accept',
        auth: false,
        plugins: pageConfig,
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 },
        validate: {
          query: tokenQuery,
          payload: Joi.object({ token: Joi.string().max(512) }).unknown(true),
          failAction: (_r, h) => malformed(h).takeover(),
        },
      },
      handler: async (request, h) => {
        const token = tokenOf(request);
        if (token.length < 10) return malformed(h);
        // The link first: without a live one no password is looked at, so the page cannot tell a
        // right password from a wrong one to someone who holds no invitation.
        const { summary, answer } = await summaryOr(h, token);
        if (!summary) return answer;
        const body = (request.payload ?? {}) as Record<string, unknown>;
        const action = formField(body, 'action');
        if (action === 'signin') return signInFor(summary).submit(request, h, invitationPath(token), body);
        if (action === 'register') return submitRegister(request, h, token, summary, body);
        if (action === 'accept') return submitAccept(request, h, token, summary, body);
        return show(request, h, token, summary, 'This form has expired. Try again.', 400);
      },
    },
  ];
}
