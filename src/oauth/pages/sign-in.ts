import type { Request, ResponseToolkit } from '@hapi/hapi';
import { DomainError } from '../../http/errors.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../../http/rate-limit.js';
import { SIGN_IN_LIMITS } from '../../identity/limits.js';
import { FORGOT_PASSWORD_PAGE } from '../../identity/page-paths.js';
import { tooManyAttempts } from '../../http/page-words.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { AuthorizeRequest } from '../authorize.js';
import {
  continueSignIn,
  PASSKEY_SIGN_IN_CSRF,
  pageWithPasskeys,
  passkeySignInForm,
} from '../../identity/page-factors.js';
import {
  PRE_SESSION_COOKIE,
  PRE_SESSION_TTL_SEC,
  cookie,
  formField,
  messagePage,
  page,
  redirect,
} from '../../http/page-forms.js';
import { showClient, type NamedClient } from '../client-labels.js';
import { signInPage } from './views.js';
import { AUTHORIZE_PATH, type PagesContext } from './respond.js';

type SignInExtra = { status?: number; error?: string; notice?: string; email?: string };

/** The sign-in page of /oauth/authorize: shown, and its form (password or sign-in link) submitted. */
export function createSignIn(pages: PagesContext) {
  const { app, attrs } = pages;
  const { identity } = app.services;
  const { authorize } = app.services.oauth;

  async function show(
    request: Request,
    h: ResponseToolkit,
    req: AuthorizeRequest,
    client: NamedClient,
    extra: SignInExtra = {},
  ) {
    const pre = pages.preSession(request);
    const returnTo = authorize.requestUrl(req);
    const res = pageWithPasskeys(
      app,
      h,
      signInPage({
        action: AUTHORIZE_PATH,
        client: showClient(client),
        brandName: app.kernel.config.brand.name,
        requestState: authorize.sealRequest(req),
        csrf: pages.csrfFor(pre.value, 'signin'),
        forgotPasswordUrl: `${FORGOT_PASSWORD_PAGE}?${new URLSearchParams({ return_to: returnTo })}`,
        passkey: passkeySignInForm(app, pages.csrfFor(pre.value, PASSKEY_SIGN_IN_CSRF), returnTo),
        // After the identity provider, the browser comes back to this same request (docs/identity-providers.md).
        sso: await app.services.idp.signInLinks(returnTo),
        ...extra,
      }),
      extra.status ?? 200,
    );
    if (pre.setCookie) res.header('Set-Cookie', pre.setCookie, { append: true });
    return res;
  }

  /** POST /oauth/authorize without a consent decision: the sign-in form of a sealed request. */
  async function submit(
    request: Request,
    h: ResponseToolkit,
    req: AuthorizeRequest,
    client: NamedClient,
    body: Record<string, unknown>,
  ) {
    if (!pages.csrfMatches(cookie(request, PRE_SESSION_COOKIE), 'signin', body.csrf)) {
      return page(
        h,
        messagePage(
          'This form cannot be accepted',
          'It has expired or was not sent from this page. Go back and try again.',
        ),
        403,
      );
    }
    const email = (formField(body, 'email') ?? '').trim();
    const magic = formField(body, 'action') === 'magic_link';
    // The same budgets as POST /auth/login and /auth/magic-link: this form is another door to them.
    const spent = await app.kernel.limiter.charge(
      rateLimitBucket(magic ? 'auth.magic-link' : 'auth.login', request),
      magic ? SIGN_IN_LIMITS.magicLink : SIGN_IN_LIMITS.login,
    );
    if (!spent.allowed) {
      // The refusing budget's headers (X-RateLimit-* from the kernel, Retry-After here), as on the API.
      (request.app as { rateLimit?: RateDecision }).rateLimit = spent;
      const retryAfter = rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string;
      const res = await show(request, h, req, client, {
        status: 429,
        email,
        error: tooManyAttempts(Number(retryAfter)),
      });
      return res.header('Retry-After', retryAfter);
    }
    if (magic) {
      if (!email)
        return show(request, h, req, client, {
          status: 400,
          error: 'Enter your email to receive a sign-in link.',
        });
      // The csrf check above proved this cookie exists; the link continues only where it is.
      const pre = cookie(request, PRE_SESSION_COOKIE)!;
      await identity.magicLinks.request(email, { returnTo: authorize.requestUrl(req), browser: sha256Hex(pre) });
      const res = await show(request, h, req, client, {
        email,
        notice: 'If an account exists for this email, a sign-in link is on its way. Open it in this browser.',
      });
      // Renewed so it outlives the link (15 minutes) however long the page was open.
      return res.header('Set-Cookie', `${PRE_SESSION_COOKIE}=${pre}; ${attrs(PRE_SESSION_TTL_SEC)}`, {
        append: true,
      });
    }
    // An address on a domain bound to an identity provider signs in there, then comes back to
    // this request (docs/identity-providers.md, Sign-in); the sign-in link stays the way back in.
    const bound = email ? await app.services.idp.signInLinkFor(email, authorize.requestUrl(req)) : null;
    if (bound) return redirect(h, bound, 303);
    const password = formField(body, 'password') ?? '';
    if (!email || !password)
      return show(request, h, req, client, {
        status: 400,
        email,
        error: 'Enter your email and password.',
      });
    let userId: string;
    try {
      userId = (await identity.authenticate(email, password)).id;
    } catch (err) {
      if (err instanceof DomainError && err.status === 401)
        return show(request, h, req, client, { status: 401, email, error: 'Wrong email or password.' });
      throw err;
    }
    // With two-step sign-in on, the second step comes first (docs/identity.md, Pages).
    return continueSignIn(app, request, h, userId, authorize.requestUrl(req), cookie(request, PRE_SESSION_COOKIE)!);
  }

  return { show, submit };
}

export type SignIn = ReturnType<typeof createSignIn>;
