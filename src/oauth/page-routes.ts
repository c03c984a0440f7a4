import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../http/plugin.js';
import { DomainError } from '../http/errors.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { BROWSER_SESSION_COOKIE, BROWSER_SESSION_TTL_SEC, PRE_SESSION_COOKIE } from './browser-sessions.js';
import type { AuthorizeRequest } from './authorize.js';
import { consentPage, magicLinkPage, messagePage, signInPage } from './pages/views.js';
import { rateLimitBucket, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import { SIGN_IN_LIMITS } from '../identity/limits.js';
import { htmlErrorFormat } from '../http/html.js';
import { API } from '../http/paths.js';

const AUTHORIZE_PATH = `${API}/oauth/authorize`;
const PRE_SESSION_TTL_SEC = 30 * 60;

function cookie(request: Request, name: string): string | null {
  const header = request.headers.cookie as string | undefined;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : null;
    }
  }
  return null;
}

/**
 * Login and consent pages may not be framed (clickjacking, RFC 9700 4.7) nor cached. No
 * form-action directive: browsers apply it to the redirect that follows the consent POST,
 * which goes to the client's origin.
 */
function page(h: ResponseToolkit, html: string, status = 200): ResponseObject {
  return h
    .response(html)
    .code(status)
    .type('text/html; charset=utf-8')
    .header('X-Frame-Options', 'DENY')
    .header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    )
    .header('Cache-Control', 'no-store')
    .header('Pragma', 'no-cache');
}

function redirect(h: ResponseToolkit, location: string, status = 302): ResponseObject {
  return h.response().code(status).header('Location', location).header('Cache-Control', 'no-store');
}

/**
 * The browser side of the authorization server: GET/POST /oauth/authorize (sign-in, consent)
 * and the /auth/magic landing page of sign-in links. HTML, no JavaScript, outside the envelope.
 */
export function oauthPageRoutes(app: PluginDeps): ServerRoute[] {
  const { oauth, identity } = app.services;
  const { authorize, browserSessions, clients } = oauth;
  const secure = app.kernel.config.publicUrl.startsWith('https:');
  const publicOrigin = new URL(app.kernel.config.publicUrl).origin;
  const attrs = (maxAge: number) => `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  const pageConfig = { auth: false as const, plugins: { gantry: { errorFormat: htmlErrorFormat } } };

  /** The pre-session cookie the sign-in CSRF value is bound to (set when missing). */
  function preSession(request: Request): { value: string; setCookie: string | null } {
    const existing = cookie(request, PRE_SESSION_COOKIE);
    if (existing) return { value: existing, setCookie: null };
    const value = randomToken(24);
    return { value, setCookie: `${PRE_SESSION_COOKIE}=${value}; ${attrs(PRE_SESSION_TTL_SEC)}` };
  }

  async function showSignIn(
    request: Request,
    h: ResponseToolkit,
    req: AuthorizeRequest,
    clientName: string,
    extra: { status?: number; error?: string; notice?: string; email?: string } = {},
  ) {
    const pre = preSession(request);
    const res = page(
      h,
      signInPage({
        action: AUTHORIZE_PATH,
        clientName,
        requestState: authorize.sealRequest(req),
        csrf: authorize.csrfFor(pre.value, 'signin'),
        ...extra,
      }),
      extra.status ?? 200,
    );
    if (pre.setCookie) res.header('Set-Cookie', pre.setCookie, { append: true });
    return res;
  }

  /**
   * A remembered consent skips the page only for a confidential client: anyone can send a public
   * client's authorize request with their own PKCE pair and a redirect they can read (a loopback
   * port), so a public client is asked again every time (RFC 8252 8.6, RFC 9700 2.1.1).
   */
  async function showConsentOrApprove(
    h: ResponseToolkit,
    sessionValue: string,
    userId: string,
    req: AuthorizeRequest,
    client: { name: string; type: string },
    forceConsent: boolean,
  ) {
    const clientName = client.name;
    if (!forceConsent && client.type === 'confidential' && (await authorize.hasConsent(userId, req)))
      return redirect(h, await authorize.approve(userId, req));
    const user = await identity.getUser(userId);
    return page(
      h,
      consentPage({
        action: AUTHORIZE_PATH,
        clientName,
        userEmail: user.email,
        scopes: req.scopes,
        requestState: authorize.sealRequest(req),
        csrf: authorize.csrfFor(sessionValue, 'consent'),
      }),
    );
  }

  return [
    {
      method: 'GET',
      path: AUTHORIZE_PATH,
      options: { id: 'oauth.authorize', ...pageConfig },
      handler: async (request, h) => {
        const result = await authorize.validate(request.query as Record<string, unknown>);
        if (result.kind === 'page')
          return page(h, messagePage('This sign-in request cannot be completed', result.message), 400);
        if (result.kind === 'redirect') return redirect(h, result.url);
        const sessionValue = cookie(request, BROWSER_SESSION_COOKIE);
        const userId = await browserSessions.userOf(sessionValue);
        const forceConsent =
          typeof request.query.prompt === 'string' && request.query.prompt.split(' ').includes('consent');
        if (userId && sessionValue)
          return showConsentOrApprove(h, sessionValue, userId, result.request, result.client, forceConsent);
        return showSignIn(request, h, result.request, result.client.name);
      },
    },
    {
      method: 'POST',
      path: AUTHORIZE_PATH,
      options: {
        id: 'oauth.authorize-submit',
        ...pageConfig,
        plugins: { gantry: { errorFormat: htmlErrorFormat, rateLimit: { limit: 20, windowSec: 60 } } },
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 },
      },
      handler: async (request, h) => {
        const body = (request.payload ?? {}) as Record<string, unknown>;
        const str = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
        const req = authorize.openRequest(str('request_state') ?? '');
        if (!req)
          return page(
            h,
            messagePage('This page has expired', 'Go back to the application and start signing in again.'),
            400,
          );
        const client = await clients.find(req.clientId);
        if (
          !client ||
          !client.redirectUris.includes(req.redirectUri) ||
          !req.scopes.every((s) => client.scopes.includes(s))
        ) {
          return page(
            h,
            messagePage(
              'This sign-in request cannot be completed',
              'The application or its redirect address is no longer registered.',
            ),
            400,
          );
        }

        const decision = str('decision');
        if (decision !== undefined) {
          const sessionValue = cookie(request, BROWSER_SESSION_COOKIE);
          const userId = await browserSessions.userOf(sessionValue);
          if (!userId || !sessionValue)
            return showSignIn(request, h, req, client.name, {
              status: 401,
              error: 'Your session has ended. Sign in again.',
            });
          if (!authorize.csrfMatches(sessionValue, 'consent', body.csrf)) {
            return page(
              h,
              messagePage(
                'This form cannot be accepted',
                'It has expired or was not sent from this page. Go back and try again.',
              ),
              403,
            );
          }
          if (decision === 'allow') return redirect(h, await authorize.approve(userId, req), 303);
          if (decision === 'deny') return redirect(h, authorize.deny(req), 303);
          return page(h, messagePage('Unknown choice', 'Choose Allow or Deny.'), 400);
        }

        if (!authorize.csrfMatches(cookie(request, PRE_SESSION_COOKIE), 'signin', body.csrf)) {
          return page(
            h,
            messagePage(
              'This form cannot be accepted',
              'It has expired or was not sent from this page. Go back and try again.',
            ),
            403,
          );
        }
        const email = (str('email') ?? '').trim();
        const magic = str('action') === 'magic_link';
        // The same budgets as POST /auth/login and /auth/magic-link: this form is another door to them.
        const spent = app.kernel.limiter.hit(
          rateLimitBucket(magic ? 'auth.magic-link' : 'auth.login', request),
          magic ? SIGN_IN_LIMITS.magicLink : SIGN_IN_LIMITS.login,
        );
        if (!spent.allowed) {
          // The refusing budget's headers (X-RateLimit-* from the kernel, Retry-After here), as on the API.
          (request.app as { rateLimit?: RateDecision }).rateLimit = spent;
          const res = await showSignIn(request, h, req, client.name, {
            status: 429,
            email,
            error: 'Too many attempts. Wait a few minutes, then try again.',
          });
          return res.header(
            'Retry-After',
            rateLimitHeaders(spent, app.kernel.clock.now().getTime())['Retry-After'] as string,
          );
        }
        if (magic) {
          if (!email)
            return showSignIn(request, h, req, client.name, {
              status: 400,
              error: 'Enter your email to receive a sign-in link.',
            });
          // The csrf check above proved this cookie exists; the link continues only where it is.
          const pre = cookie(request, PRE_SESSION_COOKIE)!;
          await identity.magicLinks.request(email, { returnTo: authorize.requestUrl(req), browser: sha256Hex(pre) });
          const res = await showSignIn(request, h, req, client.name, {
            email,
            notice: 'If an account exists for this email, a sign-in link is on its way. Open it in this browser.',
          });
          // Renewed so it outlives the link (15 minutes) however long the page was open.
          return res.header('Set-Cookie', `${PRE_SESSION_COOKIE}=${pre}; ${attrs(PRE_SESSION_TTL_SEC)}`, {
            append: true,
          });
        }
        const password = str('password') ?? '';
        if (!email || !password)
          return showSignIn(request, h, req, client.name, {
            status: 400,
            email,
            error: 'Enter your email and password.',
          });
        let userId: string;
        try {
          userId = (await identity.authenticate(email, password)).id;
        } catch (err) {
          if (err instanceof DomainError && err.status === 401)
            return showSignIn(request, h, req, client.name, { status: 401, email, error: 'Wrong email or password.' });
          throw err;
        }
        const sessionValue = await browserSessions.start(userId);
        return redirect(h, authorize.requestUrl(req), 303).header(
          'Set-Cookie',
          `${BROWSER_SESSION_COOKIE}=${sessionValue}; ${attrs(BROWSER_SESSION_TTL_SEC)}`,
        );
      },
    },
    {
      method: 'GET',
      path: '/auth/magic',
      options: {
        id: 'oauth.magic-link-page',
        ...pageConfig,
        plugins: { gantry: { errorFormat: htmlErrorFormat, rateLimit: { limit: 20, windowSec: 60 } } },
      },
      handler: (request, h) => {
        const token = typeof request.query.token === 'string' ? request.query.token : '';
        if (!token) return page(h, messagePage('Sign-in link', 'This link is incomplete. Ask for a new one.'), 400);
        // The Continue button must come from this page in this browser (login CSRF): its value
        // is bound to the pre-session cookie, set here when the browser has none yet.
        const pre = preSession(request);
        const res = page(h, magicLinkPage(token, authorize.csrfFor(pre.value, 'magic')));
        if (pre.setCookie) res.header('Set-Cookie', pre.setCookie, { append: true });
        return res;
      },
    },
    {
      method: 'POST',
      path: '/auth/magic',
      options: {
        id: 'oauth.magic-link-submit',
        ...pageConfig,
        plugins: { gantry: { errorFormat: htmlErrorFormat, rateLimit: { limit: 20, windowSec: 60 } } },
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 4 * 1024 },
      },
      handler: async (request, h) => {
        const body = (request.payload ?? {}) as Record<string, unknown>;
        const token = typeof body.token === 'string' ? body.token : '';
        if (!token) return page(h, messagePage('Sign-in link', 'This link is incomplete. Ask for a new one.'), 400);
        // Login CSRF: a form on another site must not sign this browser in to the attacker's
        // account with the attacker's own link. Our pages send no referrer, so a genuine POST
        // carries Origin "null" or ours; the csrf value is what proves it came from our page.
        const origin = request.headers.origin as string | undefined;
        const crossSite =
          request.headers['sec-fetch-site'] === 'cross-site' ||
          (origin !== undefined && origin !== 'null' && origin !== publicOrigin);
        const pre = cookie(request, PRE_SESSION_COOKIE);
        if (crossSite || !authorize.csrfMatches(pre, 'magic', body.csrf)) {
          return page(
            h,
            messagePage(
              'This form cannot be accepted',
              'It has expired or was not sent from the sign-in link page. Open the link from the mail again.',
            ),
            403,
          );
        }
        let consumed: Awaited<ReturnType<typeof identity.magicLinks.consume>>;
        try {
          consumed = await identity.magicLinks.consume(token, sha256Hex(pre!));
        } catch (err) {
          if (err instanceof DomainError && err.status === 401)
            return page(
              h,
              messagePage('Sign-in link', 'This sign-in link is invalid, used or expired. Ask for a new one.'),
              400,
            );
          throw err;
        }
        const sessionValue = await browserSessions.start(consumed.user.id);
        const setCookie = `${BROWSER_SESSION_COOKIE}=${sessionValue}; ${attrs(BROWSER_SESSION_TTL_SEC)}`;
        // Only our own authorize endpoint is a place to continue to: never an open redirect.
        const returnTo = consumed.returnTo;
        if (returnTo && returnTo.startsWith(`${AUTHORIZE_PATH}?`) && !returnTo.includes('\\'))
          return redirect(h, returnTo, 303).header('Set-Cookie', setCookie);
        if (consumed.continuedElsewhere) {
          return page(
            h,
            messagePage(
              'You are signed in',
              'This link was asked for in another browser, so the application that asked is not continued here. Go back to it and sign in again if you want to continue.',
            ),
          ).header('Set-Cookie', setCookie);
        }
        return page(
          h,
          messagePage('You are signed in', 'You can close this page and return to the application.'),
        ).header('Set-Cookie', setCookie);
      },
    },
  ];
}
