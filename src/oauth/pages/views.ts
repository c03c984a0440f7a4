import type { ShownClient } from '../client-labels.js';
import { SCOPES, type Scope } from '../scopes.js';
import type { WorkspaceOptions } from '../workspace-choice.js';
import { escapeHtml } from '../../http/html.js';
import type { PageView } from '../../http/page-kit.js';
import { ACCOUNT_PAGE } from '../../identity/page-paths.js';

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

export interface SignInView {
  action: string;
  /** The client, named with its marks (unverified, a document's host). */
  client: ShownClient;
  brandName: string;
  requestState: string;
  csrf: string;
  /** Where "Forgot your password?" leads (the reset page, returning to this request). */
  forgotPasswordUrl: string;
  email?: string;
  error?: string;
  notice?: string;
  /** "Sign in with a passkey" (a form of its own, after this one), or ''. */
  passkey?: string;
  /** "Continue with {name}": the operator's identity providers (docs/identity-providers.md). */
  sso?: ReadonlyArray<{ name: string; href: string }>;
}

const ssoButtons = (links: ReadonlyArray<{ name: string; href: string }> = []) =>
  links.length === 0
    ? ''
    : `\n<div class="sso"><p class="divider">or</p>\n<div class="actions">${links
        .map((l) => `<a class="btn btn-secondary" href="${escapeHtml(l.href)}">Continue with ${escapeHtml(l.name)}</a>`)
        .join('\n')}</div></div>`;

/**
 * The warning under a self-registered client's name (docs/oauth.md, Authorize, Pages): it named
 * itself, and for a metadata document, the host that publishes it.
 */
const unverifiedNotice = (client: ShownClient, brandName: string, advice = '') =>
  client.unverified
    ? `<p class="warning" role="note"><strong>unverified</strong> application: it registered itself${client.documentHost ? ` with a document published by <strong>${escapeHtml(client.documentHost)}</strong>` : ''} and ${escapeHtml(brandName)} has not checked its name.${advice}</p>\n`
    : '';

const alerts = (v: { error?: string; notice?: string }) =>
  `${v.error ? `<p class="error" role="alert">${escapeHtml(v.error)}</p>\n` : ''}${v.notice ? `<p class="notice" role="status">${escapeHtml(v.notice)}</p>\n` : ''}`;

/**
 * The sign-in form (docs/interface.md, OAuth: inputs email and password; hidden CSRF and request
 * state). Sign in comes first so Enter submits the password; the link button needs no password.
 */
export function signInPage(view: SignInView): PageView {
  return {
    title: 'Sign in',
    body: `<h1>Sign in to continue to ${escapeHtml(view.client.label)}</h1>
${unverifiedNotice(view.client, view.brandName)}${alerts(view)}<form method="post" action="${escapeHtml(view.action)}">
${hidden('csrf', view.csrf)}
${hidden('request_state', view.requestState)}
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="username" value="${escapeHtml(view.email ?? '')}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password">
<p class="field-link"><a href="${escapeHtml(view.forgotPasswordUrl)}">Forgot your password?</a></p>
<div class="actions"><button class="btn btn-primary" type="submit" name="action" value="password">Sign in</button></div>
<p class="divider">or</p>
<div class="actions"><button class="btn btn-secondary" type="submit" name="action" value="magic_link">Email me a sign-in link instead</button></div>
</form>
<p class="muted">The link signs you in and brings you back to this request.</p>${view.passkey ? `\n${view.passkey}` : ''}${ssoButtons(view.sso)}`,
  };
}

export interface ConsentView {
  action: string;
  /** The client, named with its marks (unverified, a document's host). */
  client: ShownClient;
  userEmail: string;
  scopes: readonly string[];
  requestState: string;
  csrf: string;
  /** Where the answer is sent: the host of the redirect URI (docs/oauth.md, Authorize). */
  redirectHost: string;
  /** The CSRF value of the "Not you? Sign out" form (bound to the session). */
  signOutCsrf: string;
  brandName: string;
  /** For a request that binds a workspace (MCP): the choice, field `workspace_id`. */
  workspaces?: WorkspaceOptions;
}

const option = (w: { id: string; name: string }, selected: string) =>
  `<option value="${escapeHtml(w.id)}"${w.id === selected ? ' selected' : ''}>${escapeHtml(w.name)}</option>`;

/** The `workspace_id` select (docs/oauth.md, Workspace binding): one group per account, the user's default preselected. */
function workspaceField(choice: WorkspaceOptions): string {
  const groups = choice.accounts
    .map(
      (a) =>
        `<optgroup label="${escapeHtml(a.account)}">\n${a.workspaces.map((w) => option(w, choice.selected)).join('\n')}\n</optgroup>`,
    )
    .join('\n');
  return `<label for="workspace_id">Workspace whose tools it may use</label>
<select id="workspace_id" name="workspace_id" required>
${groups}
</select>
<p class="muted">It sees and calls only this workspace's tools.</p>`;
}

/**
 * The consent form: each scope in plain words, where the answer goes, the workspace when one is
 * bound, Allow (primary) and Deny. "Not you?" submits a form of its own, placed last so the
 * consent form's fields come first in the document.
 */
export function consentPage(view: ConsentView): PageView {
  const items = view.scopes
    .map(
      (s) =>
        `<li><strong>${escapeHtml(SCOPES[s as Scope] ?? s)}</strong> <span class="muted">(${escapeHtml(s)})</span></li>`,
    )
    .join('\n');
  return {
    title: 'Allow access',
    body: `<h1>${escapeHtml(view.client.label)} wants to access your ${escapeHtml(view.brandName)} account</h1>
<p class="muted">Signed in as <strong>${escapeHtml(view.userEmail)}</strong>. <button class="btn-link" type="submit" form="signout" name="action" value="signout">Not you? Sign out</button></p>
${unverifiedNotice(view.client, view.brandName, ' Check the address below.')}<p>If you allow it, ${escapeHtml(view.client.label)} will be able to:</p>
<ul class="scopes">
${items}
</ul>
<p id="redirect-host">You will be sent back to <strong>${escapeHtml(view.redirectHost)}</strong>.</p>
<form method="post" action="${escapeHtml(view.action)}">
${hidden('csrf', view.csrf)}
${hidden('request_state', view.requestState)}
${view.workspaces ? workspaceField(view.workspaces) : ''}
<div class="actions">
<button class="btn btn-primary" type="submit" name="decision" value="allow">Allow</button>
<button class="btn btn-secondary" type="submit" name="decision" value="deny">Deny</button>
</div>
</form>
<p class="muted">You can take this back at any time from <a href="${ACCOUNT_PAGE}">your account's connected apps</a>.</p>
<form id="signout" method="post" action="${escapeHtml(view.action)}">
${hidden('csrf', view.signOutCsrf)}
${hidden('request_state', view.requestState)}
</form>`,
  };
}

/**
 * A request that binds a workspace, from a user in none (docs/oauth.md, Workspace binding): what
 * to do about it, and the way back to the application, which the Deny answer takes (it learns
 * access_denied, as RFC 6749 4.1.2.1 has it, rather than waiting on a page that leads nowhere).
 */
export function noWorkspacePage(
  clientLabel: string,
  form: { action: string; csrf: string; requestState: string },
): PageView {
  return {
    title: 'No workspace to share',
    body: `<h1>No workspace to share</h1>
<p>${escapeHtml(clientLabel)} asks to use the tools of one of your workspaces, and you belong to none yet. Ask the owner of an account to invite you: once you have accepted the invitation from its mail, start again from ${escapeHtml(clientLabel)}.</p>
<form method="post" action="${escapeHtml(form.action)}">
${hidden('csrf', form.csrf)}
${hidden('request_state', form.requestState)}
<div class="actions next">
<button class="btn btn-primary" type="submit" name="decision" value="deny">Back to ${escapeHtml(clientLabel)}</button>
<a class="btn btn-secondary" href="${ACCOUNT_PAGE}">Go to your account</a>
</div>
</form>`,
  };
}

/**
 * The landing page of a sign-in link: opening it spends nothing (mail scanners prefetch links);
 * the button POSTs the token, which signs the browser in.
 */
export function magicLinkPage(token: string, csrf: string, brandName: string): PageView {
  return {
    title: 'Sign in',
    body: `<h1>Sign in to ${escapeHtml(brandName)}</h1>
<p>Continue to sign in with the link from your mail.</p>
<form method="post" action="/auth/magic">
${hidden('csrf', csrf)}
${hidden('token', token)}
<div class="actions"><button class="btn btn-primary" type="submit">Continue</button></div>
</form>`,
  };
}
