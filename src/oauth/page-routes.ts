import { htmlPage, PAGE_ERRORS } from '../http/openapi/declare.js';
import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { htmlErrorFormat } from '../http/pages.js';
import { BROWSER_SESSION_COOKIE } from '../identity/browser-sessions.js';
import { createConsent } from './pages/consent.js';
import { magicLinkRoutes } from './pages/magic-link.js';
import { AUTHORIZE_PATH, pageConfig, pagesContext } from './pages/respond.js';
import { createSignIn } from './pages/sign-in.js';
import { cookie, formField, messagePage, nextStep, page, redirect } from '../http/page-forms.js';
import { escapeHtml } from '../http/html.js';
import type { PageView } from '../http/page-kit.js';

/**
 * The browser side of the authorization server: GET/POST /oauth/authorize (sign-in, consent)
 * and the /auth/magic landing page of sign-in links. HTML, no JavaScript, outside the envelope.
 */
export function oauthPageRoutes(app: PluginDeps): ServerRoute[] {
  const { authorize, clients } = app.services.oauth;
  const { browserSessions } = app.services.identity;
  const pages = pagesContext(app);
  const signIn = createSignIn(pages);
  const consent = createConsent(pages, signIn);
  const brand = app.kernel.config.brand.name;

  /**
   * A request the server cannot accept (unknown client, unregistered redirect URI), never sent
   * back to the client (RFC 6749 4.1.2.1): what it means for the person, and the developer's
   * reason below it, which they can pass on with the page's reference.
   */
  const requestErrorPage = (reason: string): PageView => ({
    title: 'This sign-in request cannot be completed',
    body: `<h1>This sign-in request cannot be completed</h1>
<p>The application that sent you here asked ${escapeHtml(brand)} for something it cannot accept, so you cannot sign in to it from here. Go back to the application and try again; if this keeps happening, tell its developer what is written below.</p>
<p class="muted">For the developer: ${escapeHtml(reason)}</p>
${nextStep({ href: '/', label: 'Go to the home page' })}`,
  });

  return [
    {
      method: 'GET',
      path: AUTHORIZE_PATH,
      options: { id: 'oauth.authorize', ...pageConfig },
      handler: async (request, h) => {
        const result = await authorize.validate(request.query as Record<string, unknown>);
        if (result.kind === 'page') return page(h, requestErrorPage(result.message), 400);
        if (result.kind === 'redirect') return redirect(h, result.url);
        const sessionValue = cookie(request, BROWSER_SESSION_COOKIE);
        const userId = await browserSessions.userOf(sessionValue);
        const forceConsent =
          typeof request.query.prompt === 'string' && request.query.prompt.split(' ').includes('consent');
        if (userId && sessionValue)
          return consent.showOrApprove(h, sessionValue, userId, result.request, result.client, forceConsent);
        return signIn.show(request, h, result.request, result.client);
      },
    },
    {
      method: 'POST',
      path: AUTHORIZE_PATH,
      options: {
        id: 'oauth.authorize-submit',
        ...pageConfig,
        plugins: {
          gantry: {
            responses: htmlPage('The sign-in or consent page, or the redirect back to the client'),
            errors: PAGE_ERRORS,
            errorFormat: htmlErrorFormat,
            rateLimit: { limit: 20, windowSec: 60 },
          },
        },
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 },
      },
      handler: async (request, h) => {
        const body = (request.payload ?? {}) as Record<string, unknown>;
        const req = authorize.openRequest(formField(body, 'request_state') ?? '');
        if (!req)
          return page(
            h,
            messagePage('This page has expired', 'Go back to the application and start signing in again.'),
            400,
          );
        const client = await clients.find(req.clientId);
        if (
          !client ||
          !clients.redirectAllowed(client, req.redirectUri) ||
          !req.scopes.every((s) => client.scopes.includes(s))
        ) {
          return page(h, requestErrorPage('The application or its redirect address is no longer registered.'), 400);
        }
        if (formField(body, 'action') === 'signout') return consent.signOut(request, h, req, body);
        const decision = formField(body, 'decision');
        if (decision !== undefined) return consent.decide(request, h, req, client, decision, body);
        return signIn.submit(request, h, req, client, body);
      },
    },
    ...magicLinkRoutes(pages),
  ];
}
