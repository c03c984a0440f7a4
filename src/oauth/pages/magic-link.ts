import { htmlPage, PAGE_ERRORS } from '../../http/openapi/declare.js';
import type { ServerRoute } from '@hapi/hapi';
import { DomainError } from '../../http/errors.js';
import { htmlErrorFormat } from '../../http/pages.js';
import { sha256Hex } from '../../lib/crypto.js';
import { BROWSER_SESSION_COOKIE, BROWSER_SESSION_TTL_SEC } from '../../identity/browser-sessions.js';
import { PRE_SESSION_COOKIE, cookie, messagePage, page, redirect } from '../../http/page-forms.js';
import { clientDeviceOf } from '../../http/client-address.js';
import { continueSignIn } from '../../identity/page-factors.js';
import { magicLinkPage } from './views.js';
import { ACCOUNT_PAGE } from '../../identity/page-paths.js';
import { AUTHORIZE_PATH, pageConfig, type PagesContext } from './respond.js';

/** Only our own authorize endpoint is a place to continue to: never an open redirect. */
const safeReturn = (returnTo: string | null) =>
  returnTo?.startsWith(`${AUTHORIZE_PATH}?`) && !returnTo.includes('\\') ? returnTo : null;

/** GET/POST /auth/magic: the landing page of a sign-in link, and its Continue button. */
export function magicLinkRoutes(pages: PagesContext): ServerRoute[] {
  const { app, attrs } = pages;
  const { identity } = app.services;
  const { browserSessions } = identity;
  const publicOrigin = new URL(app.kernel.config.publicUrl).origin;
  const brand = app.kernel.config.brand.name;
  // Where a person goes from a link that ended here (docs/kernel.md, Pages: no dead ends).
  const yourAccount = { href: ACCOUNT_PAGE, label: 'Go to your account' };
  const signInHere = { href: ACCOUNT_PAGE, label: 'Sign in' };
  const home = { href: '/', label: 'Go to the home page' };
  const incomplete = messagePage(
    'This sign-in link is incomplete',
    'Open the link from the mail again: it may have been cut in two. If it still does not work, ask for a new one.',
    [signInHere, home],
  );

  return [
    {
      method: 'GET',
      path: '/auth/magic',
      options: {
        id: 'oauth.magic-link-page',
        ...pageConfig,
        plugins: {
          gantry: {
            responses: htmlPage('The magic link page: a button that signs the browser in'),
            errors: PAGE_ERRORS,
            errorFormat: htmlErrorFormat,
            rateLimit: { limit: 20, windowSec: 60 },
          },
        },
      },
      handler: (request, h) => {
        const token = typeof request.query.token === 'string' ? request.query.token : '';
        if (!token) return page(h, incomplete, 400);
        // The Continue button must come from this page in this browser (login CSRF): its value
        // is bound to the pre-session cookie, set here when the browser has none yet.
        const pre = pages.preSession(request);
        const res = page(h, magicLinkPage(token, pages.csrfFor(pre.value, 'magic'), app.kernel.config.brand.name));
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
        plugins: {
          gantry: {
            responses: htmlPage('Signed in: on to the pending authorize request, or a page'),
            errors: PAGE_ERRORS,
            errorFormat: htmlErrorFormat,
            // Spends a magic link: exact across nodes (docs/postgres.md, Rate limits).
            rateLimit: { limit: 20, windowSec: 60, acrossNodes: true },
          },
        },
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 4 * 1024 },
      },
      handler: async (request, h) => {
        const body = (request.payload ?? {}) as Record<string, unknown>;
        const token = typeof body.token === 'string' ? body.token : '';
        if (!token) return page(h, incomplete, 400);
        // Login CSRF: a form on another site must not sign this browser in to the attacker's
        // account with the attacker's own link. Our pages send no referrer, so a genuine POST
        // carries Origin "null" or ours; the csrf value is what proves it came from our page.
        const origin = request.headers.origin as string | undefined;
        const crossSite =
          request.headers['sec-fetch-site'] === 'cross-site' ||
          (origin !== undefined && origin !== 'null' && origin !== publicOrigin);
        const pre = cookie(request, PRE_SESSION_COOKIE);
        if (crossSite || !pages.csrfMatches(pre, 'magic', body.csrf)) {
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
              messagePage(
                'This sign-in link cannot be used',
                'This sign-in link is invalid, already used or expired: a link works once, for 15 minutes. If an application sent you here, go back to it and ask for a new link; or sign in here.',
                [signInHere, home],
              ),
              400,
            );
          throw err;
        }
        // With two-step sign-in on, the link is the first factor only: the second step comes
        // next, then where the link was asked for, or the account center (docs/identity.md, Pages).
        if ((await identity.factors.state(consumed.user.id)).twoStep)
          return continueSignIn(app, request, h, consumed.user.id, safeReturn(consumed.returnTo) ?? ACCOUNT_PAGE, pre!);
        const sessionValue = await browserSessions.start(consumed.user.id, clientDeviceOf(request));
        const setCookie = `${BROWSER_SESSION_COOKIE}=${sessionValue}; ${attrs(BROWSER_SESSION_TTL_SEC)}`;
        const returnTo = safeReturn(consumed.returnTo);
        if (returnTo) return redirect(h, returnTo, 303).header('Set-Cookie', setCookie);
        if (consumed.continuedElsewhere) {
          return page(
            h,
            messagePage(
              'You are signed in',
              `This link was asked for in another browser, so the application that asked for it is not continued here. To continue with it, go back to the browser where you asked for the link and sign in there again. This browser is now signed in to ${brand}.`,
              [yourAccount, home],
            ),
          ).header('Set-Cookie', setCookie);
        }
        return page(
          h,
          messagePage('You are signed in', `This browser is now signed in to ${brand}.`, [yourAccount, home]),
        ).header('Set-Cookie', setCookie);
      },
    },
  ];
}
