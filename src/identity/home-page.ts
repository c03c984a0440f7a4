import type { ServerRoute } from '@hapi/hapi';
import { DomainError } from '../http/errors.js';
import { escapeHtml as escape } from '../http/html.js';
import { prefersHtml } from '../http/negotiation.js';
import { page as pageAnswer } from '../http/openapi/declare.js';
import { cookie, page } from '../http/page-forms.js';
import { API } from '../http/paths.js';
import type { PluginDeps } from '../services.js';
import { BROWSER_SESSION_COOKIE } from './browser-sessions.js';
import { ACCOUNT_PAGE } from './page-paths.js';

/** The public status page (docs/status.md). */
const STATUS_PAGE = '/status';

/**
 * GET /: the appliance's front door for a person (docs/kernel.md, Pages: the home page): the
 * operator's name, the way to sign in or to one's account, the status page and, for developers,
 * the API reference. An API client asking for `/` keeps getting the envelope's 404: there is
 * no JSON resource here (docs/interface.md).
 */
export function homePageRoutes(app: PluginDeps): ServerRoute[] {
  const { browserSessions } = app.services.identity;
  const brand = app.kernel.config.brand.name;
  return [
    {
      method: 'GET',
      path: '/',
      options: {
        id: 'page.home',
        auth: false,
        plugins: {
          gantry: {
            responses: { 200: pageAnswer('The home page, for a browser') },
            errors: ['NOT_FOUND'],
          },
        },
      },
      handler: async (request, h) => {
        // The same answer as any path without a route.
        if (!prefersHtml(request)) throw new DomainError('NOT_FOUND', 'No such endpoint');
        const userId = await browserSessions.userOf(cookie(request, BROWSER_SESSION_COOKIE));
        const user = userId ? await app.services.identity.findUserById(userId) : undefined;
        const who = user
          ? `<p>Signed in as <strong>${escape(user.email)}</strong>.</p>`
          : '<p>Sign in to manage your account: your profile, password, sessions and the apps you connected.</p>';
        return page(h, {
          title: 'Home',
          body: `<h1>Welcome to ${escape(brand)}</h1>
${who}
<div class="actions">
<a class="btn btn-primary" href="${ACCOUNT_PAGE}">${user ? 'Your account' : 'Sign in'}</a>
<a class="btn btn-secondary" href="${STATUS_PAGE}">Service status</a>
</div>
<p class="muted next">For developers: the <a href="${API}/openapi.json">API reference</a> (an OpenAPI 3.1 document).</p>`,
        });
      },
    },
  ];
}
