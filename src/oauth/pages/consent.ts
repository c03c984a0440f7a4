import type { Request, ResponseToolkit } from '@hapi/hapi';
import { DomainError } from '../../http/errors.js';
import { bindsWorkspace, type AuthorizeRequest } from '../authorize.js';
import { BROWSER_SESSION_COOKIE } from '../../identity/browser-sessions.js';
import { showClient, type NamedClient } from '../client-labels.js';
import { redirectHostOf } from '../redirect-uris.js';
import { consentPage, noWorkspacePage } from './views.js';
import { AUTHORIZE_PATH, type PagesContext } from './respond.js';
import type { SignIn } from './sign-in.js';
import { cookie, formField, messagePage, page, redirect } from '../../http/page-forms.js';

/** The consent page of /oauth/authorize: shown (or skipped), and the decision submitted. */
export function createConsent(pages: PagesContext, signIn: SignIn) {
  const { identity } = pages.app.services;
  const { authorize } = pages.app.services.oauth;
  const { browserSessions } = pages.app.services.identity;

  /**
   * A remembered consent skips the page only for a confidential client: anyone can send a public
   * client's authorize request with their own PKCE pair and a redirect they can read (a loopback
   * port), so a public client is asked again every time (RFC 8252 8.6, RFC 9700 2.1.1).
   */
  async function showOrApprove(
    h: ResponseToolkit,
    sessionValue: string,
    userId: string,
    req: AuthorizeRequest,
    client: NamedClient & { type: string },
    forceConsent: boolean,
  ) {
    const shown = showClient(client);
    if (!forceConsent && client.type === 'confidential' && (await authorize.hasConsent(userId, req)))
      return redirect(h, await authorize.approve(userId, req));
    const workspaces = bindsWorkspace(req) ? await authorize.workspaceOptions(userId) : undefined;
    if (workspaces === null)
      return page(
        h,
        noWorkspacePage(shown.label, {
          action: AUTHORIZE_PATH,
          csrf: pages.csrfFor(sessionValue, 'consent'),
          requestState: authorize.sealRequest(req),
        }),
        403,
      );
    const user = await identity.getUser(userId);
    return page(
      h,
      consentPage({
        action: AUTHORIZE_PATH,
        client: shown,
        userEmail: user.email,
        scopes: req.scopes,
        requestState: authorize.sealRequest(req),
        csrf: pages.csrfFor(sessionValue, 'consent'),
        signOutCsrf: pages.csrfFor(sessionValue, 'signout'),
        redirectHost: redirectHostOf(req.redirectUri),
        brandName: pages.app.kernel.config.brand.name,
        workspaces,
      }),
    );
  }

  /** Allow: the code's redirect, or a 400 page when the chosen workspace is not one the user may use. */
  async function allow(h: ResponseToolkit, userId: string, req: AuthorizeRequest, body: Record<string, unknown>) {
    try {
      return redirect(h, await authorize.approve(userId, req, formField(body, 'workspace_id')), 303);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'VALIDATION_FAILED')
        return page(
          h,
          messagePage(
            'Choose one of your workspaces',
            'The workspace sent is not one you may use. Go back and choose again.',
          ),
          400,
        );
      throw err;
    }
  }

  /** POST /oauth/authorize with a decision: allow or deny, by the signed-in user of this browser. */
  async function decide(
    request: Request,
    h: ResponseToolkit,
    req: AuthorizeRequest,
    client: NamedClient,
    decision: string,
    body: Record<string, unknown>,
  ) {
    const sessionValue = cookie(request, BROWSER_SESSION_COOKIE);
    const userId = await browserSessions.userOf(sessionValue);
    if (!userId || !sessionValue)
      return signIn.show(request, h, req, client, {
        status: 401,
        error: 'Your session has ended. Sign in again.',
      });
    if (!pages.csrfMatches(sessionValue, 'consent', body.csrf)) {
      return page(
        h,
        messagePage(
          'This form cannot be accepted',
          'It has expired or was not sent from this page. Go back and try again.',
        ),
        403,
      );
    }
    if (decision === 'allow') return allow(h, userId, req, body);
    if (decision === 'deny') return redirect(h, authorize.deny(req), 303);
    return page(h, messagePage('Unknown choice', 'Choose Allow or Deny.'), 400);
  }

  /**
   * "Not you? Sign out" on the consent page: ends this browser's session (and the identity
   * session under it), then the same authorization request starts again at the sign-in form.
   * The CSRF value is bound to the session, so another site cannot sign the browser out.
   */
  async function signOut(request: Request, h: ResponseToolkit, req: AuthorizeRequest, body: Record<string, unknown>) {
    const sessionValue = cookie(request, BROWSER_SESSION_COOKIE);
    if (sessionValue && (await browserSessions.userOf(sessionValue))) {
      if (!pages.csrfMatches(sessionValue, 'signout', body.csrf))
        return page(
          h,
          messagePage(
            'This form cannot be accepted',
            'It has expired or was not sent from this page. Go back and try again.',
          ),
          403,
        );
      await browserSessions.end(sessionValue);
    }
    return redirect(h, authorize.requestUrl(req), 303).header(
      'Set-Cookie',
      `${BROWSER_SESSION_COOKIE}=; ${pages.attrs(0)}`,
    );
  }

  return { showOrApprove, decide, signOut };
}
