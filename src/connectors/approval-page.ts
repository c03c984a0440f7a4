import Joi from 'joi';
import { ACCOUNT_PAGE } from '../identity/page-paths.js';
import { htmlPage, jsonBody, PAGE_ERRORS } from '../http/openapi/declare.js';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { userPrincipal } from '../http/auth.js';
import { DomainError } from '../http/errors.js';
import { escapeHtml as escape } from '../http/html.js';
import { htmlErrorFormat } from '../http/pages.js';
import { BROWSER_SESSION_COOKIE } from '../identity/browser-sessions.js';
import type { PageView } from '../http/page-kit.js';

import { createPageSignIn } from '../identity/page-sign-in.js';
import { credentialField, pageWithPasskeys, passkeyChoices, stepUpFields } from '../identity/page-factors.js';
import type { InputCut } from './approval-input-cuts.js';
import { approvalPagePath } from './approvals-mcp.js';
import { cookie, formField, messagePage, nextStep, page, redirect } from '../http/page-forms.js';
import { relativeInWords, timeTag } from '../http/page-words.js';

const STATUS_TEXT: Record<string, string> = {
  approved: 'This call was approved.',
  rejected: 'This call was rejected.',
  expired: 'This approval request expired before it was used; the caller has to ask again.',
  failed: 'This call was approved but failed.',
};

/** The page's title and heading by the approval's state: it says what happened once decided. */
const TITLES: Record<string, string> = {
  approved: 'Tool call approved',
  rejected: 'Tool call rejected',
  expired: 'Approval expired',
  failed: 'Tool call failed',
};

const csrfPurpose = (id: string) => `approval:${id}`;
/** The page's browser sign-in: its user, the identity session under it, and the cookie's value. */
type Session = { userId: string; sessionId: string; sessionValue: string };
type Review = Awaited<ReturnType<PluginDeps['services']['connectors']['approvals']['page']['review']>>;

interface ReviewView extends Review {
  workspaceName: string;
  requester: string;
  clientName: string;
  /** Who decided, when decided. */
  decider: string | null;
  csrf: string;
  now: Date;
  /** A refused step-up (a wrong code), said above the code field. */
  stepUpError?: string;
}

/**
 * The decision part of a pending approval (docs/connectors.md, Approver step-up): the two
 * buttons; with a second factor to prove first, the code field (or passkey buttons) in the same
 * form, so one submit proves it and decides; when the owner requires a factor the approver
 * lacks, where to set one up instead.
 */
function decisionForm(v: ReviewView): string {
  const a = v.approval;
  const { standing, methods } = v.approver;
  if (standing === 'enrol')
    return `<p class="warning" id="status" data-status="pending">This account's owner requires approvers to use two-step sign-in or a passkey. <a href="${ACCOUNT_PAGE}">Set one up in your account</a>, then come back to decide.</p>`;
  const stepUp = standing === 'step_up';
  const passkey = stepUp && methods.includes('passkey');
  const code = !stepUp || methods.includes('totp');
  return `<form method="post" action="${escape(approvalPagePath(a.id))}"${passkey ? ` data-passkey-options="${escape(approvalPagePath(a.id))}/passkey-options"` : ''}>
<input type="hidden" name="csrf" value="${escape(v.csrf)}">
<p id="status" data-status="pending">${a.mode === 'retry' ? 'Approving lets the same call, retried with the same arguments, run once.' : 'Approving runs the call now.'}</p>
${stepUp ? stepUpFields(methods, v.stepUpError) : ''}${
  code
    ? `<div class="actions">
<button class="btn btn-primary" type="submit" name="decision" value="approve">Approve</button>
<button class="btn btn-secondary" type="submit" name="decision" value="reject">Reject</button>
</div>`
    : ''
}
${
  passkey
    ? passkeyChoices([
        { name: 'decision', value: 'approve', text: 'Approve with a passkey' },
        { name: 'decision', value: 'reject', text: 'Reject with a passkey' },
      ])
    : ''
}
</form>`;
}

/** A moment as words in <time>, with how far it is from now ("in 10 minutes", "3 minutes ago"). */
const when = (iso: string, now: Date) => `${timeTag(iso)} (${escape(relativeInWords(iso, now))})`;

/** At most this many shortened parts are named on the page; the API lists them all. */
const CUTS_NAMED = 10;

/** What was shortened in the arguments, said plainly (docs/connectors.md, Invocation and approvals). */
function cutNotice(cuts: InputCut[]): string {
  if (cuts.length === 0) return '';
  const n = (x: number) => x.toLocaleString('en-US');
  const where = (path: string) => path || 'the arguments';
  const named = cuts.slice(0, CUTS_NAMED).map((c) => {
    if (c.kind === 'string') return `${where(c.path)} (${n(c.originalLength)} characters)`;
    if (c.kind === 'key') return `the name of the key ${c.path} (${n(c.originalLength)} characters)`;
    const unit = c.kind === 'array' ? 'items' : 'keys';
    return `${where(c.path)} (${n(c.originalLength)} ${unit}, the first ones shown)`;
  });
  const more = cuts.length > CUTS_NAMED ? `, and ${n(cuts.length - CUTS_NAMED)} more` : '';
  return `<p class="notice" id="arguments-cut">${escape(`Parts of the arguments are long and were shortened: ${named.join(', ')}${more}. Each shortened part ends with "…[cut …]".`)}</p>`;
}

function reviewPage(v: ReviewView): PageView {
  const a = v.approval;
  const row = (label: string, value: string) => `<dt>${escape(label)}</dt><dd>${value}</dd>`;
  // The tool's key only when it says something its name does not.
  const key = v.toolKey && v.toolKey !== v.toolName ? ` (<code>${escape(v.toolKey)}</code>)` : '';
  const tool = `${escape(v.toolName ?? 'a deleted tool')}${key}${v.instanceName ? ` of ${escape(v.instanceName)}` : ''}`;
  const args = typeof a.input === 'string' ? a.input : JSON.stringify(a.input, null, 2);
  const details = [
    row('Workspace', escape(v.workspaceName)),
    row('Tool', tool),
    a.targetOrigin ? row('Server', `<code>${escape(a.targetOrigin)}</code>`) : '',
    row('Asked by', escape(v.requester)),
    row('Through', escape(v.clientName)),
    row('Asked', when(a.createdAt, v.now)),
    v.decider && a.decidedAt ? row('Decided by', `${escape(v.decider)}, ${when(a.decidedAt, v.now)}`) : '',
    a.expiresAt ? row(a.status === 'approved' ? 'Usable until' : 'Expires', when(a.expiresAt, v.now)) : '',
  ].join('\n');
  const decided = STATUS_TEXT[a.status];
  const actions = decided
    ? `<p class="notice" id="status" role="status" data-status="${escape(a.status)}">${escape(decided)}</p>
${nextStep({ href: '/', label: 'Go to the home page' })}`
    : decisionForm(v);
  const title = TITLES[a.status] ?? 'Approve a tool call';
  return {
    title,
    body: `<h1>${escape(title)}</h1>
<dl class="details">
${details}
</dl>
<p>Arguments:</p>
${cutNotice(a.inputCut)}
<pre class="arguments">${escape(args ?? 'null')}</pre>
${actions}`,
  };
}

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
