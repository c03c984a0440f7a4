import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { escapeHtml as escape } from '../http/html.js';
import { htmlPage, PAGE_ERRORS } from '../http/openapi/declare.js';
import type { PageView } from '../http/page-kit.js';
import { htmlErrorFormat } from '../http/pages.js';
import type { PluginDeps } from '../services.js';
import { BROWSER_SESSION_COOKIE } from '../identity/browser-sessions.js';

import type { HeldLink } from './oauth-linking.js';
import { createPageSignIn } from '../identity/page-sign-in.js';
import { cookie, formField, messagePage, page, redirect } from '../http/page-forms.js';

/**
 * The cookie that binds a connector link to the browser that started it (docs/connectors.md,
 * OAuth linking): set by the initiate answer, and by a callback that another browser finished
 * (it then holds the code for this page). It lives as long as a link's state.
 */
export const LINK_COOKIE = 'gantry_connector_link';
export const LINK_COOKIE_TTL_SEC = 10 * 60;
export const linkPagePath = (hold: string) => `/connectors/link/${hold}`;

const csrfPurpose = (hold: string) => `connector-link:${hold}`;

function confirmPage(held: HeldLink, hold: string, email: string, csrf: string): PageView {
  const whose = held.perUser ? 'your own account' : 'the account everyone in the workspace will use';
  return {
    title: 'Finish connecting',
    body: `<h1>Finish connecting ${escape(held.instanceName)}</h1>
<p>You, <strong>${escape(email)}</strong>, started connecting <strong>${escape(held.instanceName)}</strong>${
      held.server ? ` (<code>${escape(held.server)}</code>)` : ''
    }. The account you just authorized in this browser becomes ${whose} for it.</p>
<p>If you did not start this, or someone sent you the link, cancel: nothing will be stored.</p>
<form method="post" action="${escape(linkPagePath(hold))}">
<input type="hidden" name="csrf" value="${escape(csrf)}">
<div class="actions">
<button class="btn btn-primary" type="submit" name="decision" value="confirm" autofocus>Connect</button>
<button class="btn btn-secondary" type="submit" name="decision" value="cancel">Cancel</button>
</div>
</form>`,
  };
}

const REFUSALS = {
  gone: [
    'Nothing to finish',
    'This link has already been finished, cancelled or has expired (links last 10 minutes). Start again.',
    404,
  ],
  other_browser: [
    'Finish in the browser you connected with',
    'This link can only be finished in the browser that came back from the provider.',
    403,
  ],
  other_user: [
    'This link was started by someone else',
    'Another member started this link and sent it to you: your account was not connected to their link, and nothing was stored. Nothing more to do here.',
    403,
  ],
} as const;

/**
 * GET/POST /connectors/link/{hold}: a link whose callback reached Gantry in a browser without
 * the link cookie (another browser, or a client on another site) waits here for the member who
 * started it, signed in on this page, to confirm; anyone else is refused and the code dropped
 * (docs/security.md, N-H3).
 */
export function linkPageRoutes(app: PluginDeps): ServerRoute[] {
  const { connectors, identity } = app.services;
  const signIn = createPageSignIn(app, 'Sign in to finish connecting');
  const plugins = {
    gantry: {
      errorFormat: htmlErrorFormat,
      responses: htmlPage('Finishing a connector link'),
      errors: PAGE_ERRORS,
    },
  };
  const holdOf = (request: Request) => (request.params as { hold: string }).hold;
  const refused = (h: ResponseToolkit, why: keyof typeof REFUSALS) => {
    const [title, text, status] = REFUSALS[why];
    return page(h, messagePage(title, text), status);
  };
  const signedIn = async (request: Request) => {
    const sessionValue = cookie(request, BROWSER_SESSION_COOKIE);
    const userId = await identity.browserSessions.userOf(sessionValue);
    return userId && sessionValue ? { userId, sessionValue } : null;
  };

  return [
    {
      method: 'GET',
      path: '/connectors/link/{hold}',
      options: { id: 'connectors.link.page', auth: false, plugins },
      handler: async (request, h) => {
        const hold = holdOf(request);
        const held = await connectors.oauth.held(hold, cookie(request, LINK_COOKIE));
        if ('refused' in held) return refused(h, held.refused);
        const session = await signedIn(request);
        if (!session) return signIn.show(request, h, linkPagePath(hold));
        if (session.userId !== held.userId) return refused(h, 'other_user');
        const user = await identity.getUser(session.userId);
        return page(
          h,
          confirmPage(held, hold, user.email, app.kernel.pageForms.csrfFor(session.sessionValue, csrfPurpose(hold))),
        );
      },
    },
    {
      method: 'POST',
      path: '/connectors/link/{hold}',
      options: {
        id: 'connectors.link.page-submit',
        auth: false,
        plugins: { gantry: { ...plugins.gantry, rateLimit: { limit: 20, windowSec: 60 } } },
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 },
      },
      handler: async (request, h) => {
        const hold = holdOf(request);
        const body = (request.payload ?? {}) as Record<string, unknown>;
        if (formField(body, 'action') === 'signin') return signIn.submit(request, h, linkPagePath(hold), body);
        const session = await signedIn(request);
        if (!session)
          return signIn.show(request, h, linkPagePath(hold), {
            status: 401,
            error: 'Your session has ended. Sign in again.',
          });
        if (!app.kernel.pageForms.csrfMatches(session.sessionValue, csrfPurpose(hold), body.csrf))
          return page(
            h,
            messagePage(
              'This form cannot be accepted',
              'It has expired or was not sent from this page. Go back and try again.',
            ),
            403,
          );
        const decision = formField(body, 'decision');
        if (decision !== 'confirm' && decision !== 'cancel')
          return page(h, messagePage('Unknown choice', 'Choose Connect or Cancel.'), 400);
        const outcome = await connectors.oauth.finishHeld(hold, cookie(request, LINK_COOKIE), session.userId, decision);
        if ('refused' in outcome) return refused(h, outcome.refused);
        return redirect(h, outcome.location, 303);
      },
    },
  ];
}
