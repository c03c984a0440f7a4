import type { Request, ResponseToolkit } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { DomainError } from '../http/errors.js';
import { escapeHtml as escape } from '../http/html.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import { cookie, formField, messagePage, page, PRE_SESSION_COOKIE, redirect } from '../http/page-forms.js';
import { SIGN_IN_LIMITS } from './limits.js';
import { FORGOT_PASSWORD_PAGE } from './page-paths.js';
import { tooManyAttempts } from '../http/page-words.js';
import { continueSignIn, PASSKEY_SIGN_IN_CSRF, pageWithPasskeys, passkeySignInForm } from './page-factors.js';

type Extra = { status?: number; error?: string; email?: string };

/**
 * Signing in on a page of any domain (an approval, finishing an account link) for a browser
 * with no session yet: the same browser session, password check, login budget and pre-session
 * CSRF as the OAuth sign-in, the same second step and "Sign in with a passkey". `path` is the
 * page's own, which the form posts to and which is shown again once signed in; `heading` says
 * why the page asks, and `intro` (HTML, escaped by the caller) what it is about, on every state
 * of the form (an error included).
 */
export function createPageSignIn(app: PluginDeps, heading: string, intro = '') {
  const pages = app.kernel.pageForms;
  const { identity } = app.services;

  async function show(request: Request, h: ResponseToolkit, path: string, extra: Extra = {}) {
    const pre = pages.preSession(request);
    // The operator's identity providers (docs/identity-providers.md): "Continue with {name}".
    const sso = (await app.services.idp.signInLinks(path))
      .map((l) => `<a class="btn btn-secondary" href="${escape(l.href)}">Continue with ${escape(l.name)}</a>`)
      .join('\n');
    const res = pageWithPasskeys(
      app,
      h,
      {
        title: 'Sign in',
        body: `<h1>${escape(heading)}</h1>${intro ? `\n${intro}` : ''}
${extra.error ? `<p class="error" role="alert">${escape(extra.error)}</p>` : ''}
<form method="post" action="${escape(path)}">
<input type="hidden" name="action" value="signin">
<input type="hidden" name="csrf" value="${escape(pages.csrfFor(pre.value, 'page-signin'))}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" value="${escape(extra.email ?? '')}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<p class="field-link"><a href="${FORGOT_PASSWORD_PAGE}?${escape(new URLSearchParams({ return_to: path }).toString())}">Forgot your password?</a></p>
<div class="actions"><button class="btn btn-primary" type="submit">Sign in</button></div>
</form>
${passkeySignInForm(app, pages.csrfFor(pre.value, PASSKEY_SIGN_IN_CSRF), path)}
${sso ? `<div class="sso"><p class="divider">or</p>\n<div class="actions">${sso}</div></div>` : ''}`,
      },
      extra.status ?? 401,
    );
    if (pre.setCookie) res.header('Set-Cookie', pre.setCookie, { append: true });
    return res;
  }

  async function submit(request: Request, h: ResponseToolkit, path: string, body: Record<string, unknown>) {
    if (!pages.csrfMatches(cookie(request, PRE_SESSION_COOKIE), 'page-signin', body.csrf))
      return page(
        h,
        messagePage(
          'This form cannot be accepted',
          'It has expired or was not sent from this page. Go back and try again.',
        ),
        403,
      );
    const email = (formField(body, 'email') ?? '').trim();
    const password = formField(body, 'password') ?? '';
    // This form is another door to POST /auth/login: it spends the same budget.
    const spent = await app.kernel.limiter.charge(rateLimitBucket('auth.login', request), SIGN_IN_LIMITS.login);
    if (!spent.allowed) {
      (request.app as { rateLimit?: RateDecision }).rateLimit = spent;
      const retryAfter = rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string;
      return (await show(request, h, path, { status: 429, email, error: tooManyAttempts(Number(retryAfter)) })).header(
        'Retry-After',
        retryAfter,
      );
    }
    // An address on a domain bound to an identity provider signs in there (docs/identity-providers.md).
    const bound = email ? await app.services.idp.signInLinkFor(email, path) : null;
    if (bound) return redirect(h, bound, 303);
    if (!email || !password)
      return show(request, h, path, { status: 400, email, error: 'Enter your email and password.' });
    let userId: string;
    try {
      userId = (await identity.authenticate(email, password)).id;
    } catch (err) {
      if (err instanceof DomainError && err.status === 401)
        return show(request, h, path, { status: 401, email, error: 'Wrong email or password.' });
      throw err;
    }
    // With two-step sign-in on, the second step comes first (docs/identity.md, Pages).
    return continueSignIn(app, request, h, userId, path, cookie(request, PRE_SESSION_COOKIE)!);
  }

  return { show, submit };
}
