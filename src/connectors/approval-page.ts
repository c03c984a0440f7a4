import Joi from 'joi';
import { htmlPage, jsonBody, PAGE_ERRORS } from '../http/openapi/declare.js';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { userPrincipal } from '../http/auth.js';
import { DomainError } from '../http/errors.js';
import { htmlErrorFormat } from '../http/pages.js';
import { BROWSER_SESSION_COOKIE } from '../identity/browser-sessions.js';

import { createPageSignIn } from '../identity/page-sign-in.js';
import { credentialField, pageWithPasskeys } from '../identity/page-factors.js';
import { approvalPagePath } from './approvals-mcp.js';
import { cookie, formField, messagePage, page, redirect } from '../http/page-forms.js';
import { type Review, reviewPage } from './approval-views.js';

const csrfPurpose = (id: string) => `approval:${id}`;
/** The page's browser sign-in: its user, the identity session under it, and the cookie's value. */
type Session = { userId: string; sessionId: string; sessionValue: string };

/** GET/POST /approvals/:id: an owner/admin approves or rejects a gated tool call in the browser. */
export function approvalPageRoutes(app: PluginDeps): ServerRoute[] {
  const { connectors, identity, accounts, oauth } = app.services;
  const signIn = createPageSignIn(app, 'Sign in to decide this approval');
  const options = {
    auth: false as const,
    plugins: {
      gantry: { errorFormat: htmlErrorFormat, responses: htmlPage('A tool call approval page'), errors: PAGE_ERRORS },
    },
  };

  /** A refusal of the use cases as a page; anything else is the server's. */
  function refusal(h: ResponseToolkit, err: unknown) {
    if (!(err instanceof DomainError)) throw err;
    const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);
    const home = [{ href: '/', label: 'Go to the home page' }];
    if (err.status === 404)
      return page(h, messagePage('Approval not found', 'No approval has this address.', home), 404);
    if (err.status === 403)
      return page(h, messagePage('You cannot decide this approval', sentence(err.message), home), 403);
    if (err.status === 409)
      return page(h, messagePage('This approval cannot be decided', sentence(err.message), home), 409);
    throw err;
  }

  async function show(h: ResponseToolkit, session: Session, id: string, stepUpError?: string, status = 200) {
    const { userId, sessionValue } = session;
    let review: Review;
    try {
      review = await connectors.approvals.page.review(userId, session.sessionId, id);
    } catch (err) {
      return refusal(h, err);
    }
    const principal = userPrincipal(userId);
    const workspace = (await accounts.workspaces.list(principal, review.accountId)).find(
      (w) => w.id === review.workspaceId,
    );
    const requester = await identity.getUser(review.approval.requestedBy).catch(() => null);
    const client = review.approval.clientId ? await oauth.clients.find(review.approval.clientId) : null;
    const { decidedBy } = review.approval;
    const decider = decidedBy ? await identity.getUser(decidedBy).catch(() => null) : null;
    const { standing, methods } = review.approver;
    return pageWithPasskeys(
      app,
      h,
      reviewPage({
        ...review,
        stepUpError,
        workspaceName: workspace?.name ?? review.workspaceId,
        requester: requester ? `${requester.full_name ?? ''} <${requester.email}>`.trim() : 'a former member',
        clientName: review.approval.clientId
          ? client
            ? oauth.clients.label(client, 'MCP')
            : 'an unknown client (MCP)'
          : 'the REST API (the call runs when approved)',
        decider: decidedBy ? (decider ? (decider.full_name ?? decider.email) : 'a former member') : null,
        csrf: app.kernel.pageForms.csrfFor(sessionValue, csrfPurpose(id)),
        now: app.kernel.clock.now(),
      }),
      status,
      standing === 'step_up' && methods.includes('passkey'),
    );
  }

  const signedIn = async (request: Request): Promise<Session | null> => {
    const sessionValue = cookie(request, BROWSER_SESSION_COOKIE);
    const signIn = await identity.browserSessions.signInOf(sessionValue);
    return signIn && sessionValue ? { ...signIn, sessionValue } : null;
  };

  /**
   * The second factor sent with a decision (a code or a passkey), proved for this session
   * first; null when it was proved or none was sent, else the page again saying what was wrong.
   */
  async function stepUp(h: ResponseToolkit, session: Session, id: string, body: Record<string, unknown>) {
    const code = (formField(body, 'code') ?? '').trim();
    const passkey = credentialField(body);
    if (!code && !passkey) return null;
    try {
      await identity.factors.stepUp(session.userId, session.sessionId, passkey ? { passkey } : { code });
      return null;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.code === 'FORBIDDEN')
        return show(
          h,
          session,
          id,
          passkey ? 'The passkey could not be verified.' : 'That code is wrong or was already used.',
          403,
        );
      if (err.code === 'RATE_LIMIT_EXCEEDED')
        return (
          await show(
            h,
            session,
            id,
            'Too many codes were tried for your account. Wait a few minutes, then try again.',
            429,
          )
        ).header('Retry-After', err.headers['Retry-After'] ?? '300');
      return refusal(h, err);
    }
  }
  const idOf = (request: Request) => (request.params as { approvalId: string }).approvalId;

  return [
    {
      method: 'GET',
      path: '/approvals/{approvalId}',
      options: { id: 'connectors.approvals.page', ...options },
      handler: async (request, h) => {
        const session = await signedIn(request);
        if (!session) return signIn.show(request, h, approvalPagePath(idOf(request)));
        return show(h, session, idOf(request));
      },
    },
    {
      method: 'POST',
      path: '/approvals/{approvalId}',
      options: {
        id: 'connectors.approvals.page-submit',
        ...options,
        plugins: {
          gantry: {
            responses: htmlPage('A tool call approval page'),
            errors: PAGE_ERRORS,
            errorFormat: htmlErrorFormat,
            rateLimit: { limit: 20, windowSec: 60 },
          },
        },
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 },
      },
      handler: async (request, h) => {
        const id = idOf(request);
        const body = (request.payload ?? {}) as Record<string, unknown>;
        if (formField(body, 'action') === 'signin') return signIn.submit(request, h, approvalPagePath(id), body);
        const session = await signedIn(request);
        if (!session)
          return signIn.show(request, h, approvalPagePath(id), {
            status: 401,
            error: 'Your session has ended. Sign in again.',
          });
        if (!app.kernel.pageForms.csrfMatches(session.sessionValue, csrfPurpose(id), body.csrf))
          return page(
            h,
            messagePage(
              'This form cannot be accepted',
              'It has expired or was not sent from this page. Go back and try again.',
            ),
            403,
          );
        const decision = formField(body, 'decision');
        if (decision !== 'approve' && decision !== 'reject')
          return page(h, messagePage('Unknown choice', 'Choose Approve or Reject.'), 400);
        const refusedStepUp = await stepUp(h, session, id, body);
        if (refusedStepUp) return refusedStepUp;
        try {
          await connectors.approvals.page.decide(session.userId, session.sessionId, id, decision);
        } catch (err) {
          if (err instanceof DomainError && err.code === 'STEP_UP_REQUIRED')
            return show(h, session, id, 'Enter a code (or use a passkey) to confirm it is you.', 403);
          if (err instanceof DomainError && err.code === 'SECOND_FACTOR_REQUIRED')
            return show(h, session, id, undefined, 403);
          return refusal(h, err);
        }
        return redirect(h, approvalPagePath(id), 303);
      },
    },
    {
      // The passkey script's options for "Approve (or Reject) with a passkey": this user's passkeys.
      method: 'POST',
      path: '/approvals/{approvalId}/passkey-options',
      options: {
        id: 'connectors.approvals.page-passkey-options',
        ...options,
        plugins: {
          gantry: {
            responses: { 200: jsonBody(Joi.object({ options: Joi.object().unknown(true) }), 'WebAuthn options') },
            errors: PAGE_ERRORS,
            errorFormat: htmlErrorFormat,
            rateLimit: { limit: 30, windowSec: 60 },
          },
        },
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 16 * 1024 },
      },
      handler: async (request, h) => {
        const id = idOf(request);
        const session = await signedIn(request);
        const body = (request.payload ?? {}) as Record<string, unknown>;
        if (!session || !app.kernel.pageForms.csrfMatches(session.sessionValue, csrfPurpose(id), body.csrf))
          return page(h, messagePage('This form cannot be accepted', 'Reload the page and try again.'), 403);
        const options = await identity.passkeys.authenticationOptions(session.userId);
        return h.response({ options }).type('application/json; charset=utf-8').header('Cache-Control', 'no-store');
      },
    },
  ];
}
