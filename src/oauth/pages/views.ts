import { SCOPES, type Scope } from '../scopes.js';
import type { WorkspaceOptions } from '../workspace-choice.js';
import { escapeHtml } from '../../http/html.js';
import { layout } from './html.js';

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

export interface SignInView {
  action: string;
  clientName: string;
  requestState: string;
  csrf: string;
  email?: string;
  error?: string;
  notice?: string;
}

/** The sign-in form (docs/interface.md, OAuth: inputs email and password; hidden CSRF and request state). */
export function signInPage(view: SignInView): string {
  return layout(
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(view.clientName)}</h1>
${view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ''}
${view.notice ? `<p class="notice" role="status">${escapeHtml(view.notice)}</p>` : ''}
<form method="post" action="${escapeHtml(view.action)}">
${hidden('csrf', view.csrf)}
${hidden('request_state', view.requestState)}
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="username" value="${escapeHtml(view.email ?? '')}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password">
<button type="submit" name="action" value="password">Sign in</button>
<button type="submit" name="action" value="magic_link">Email me a sign-in link instead</button>
</form>
<p class="muted">The link signs you in and brings you back to this request.</p>`,
  );
}

export interface ConsentView {
  action: string;
  clientName: string;
  userEmail: string;
  scopes: readonly string[];
  requestState: string;
  csrf: string;
  /** A self-registered client: its name is its own claim; the redirect host is what can be checked. */
  unverified?: { redirectHost: string };
  /** For a request that binds a workspace (MCP): the choice, field `workspace_id`. */
  workspaces?: WorkspaceOptions;
}

const unverifiedNotice = (u: ConsentView['unverified']) =>
  u
    ? `<p class="notice" role="note"><strong>unverified</strong> application: it registered itself and Gantry has not checked its name. You will be sent back to <strong>${escapeHtml(u.redirectHost)}</strong>.</p>\n`
    : '';

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

/** The consent form: each scope in plain words, the workspace when one is bound, allow and deny buttons. */
export function consentPage(view: ConsentView): string {
  const items = view.scopes
    .map(
      (s) =>
        `<li><strong>${escapeHtml(SCOPES[s as Scope] ?? s)}</strong> <span class="muted">(${escapeHtml(s)})</span></li>`,
    )
    .join('\n');
  return layout(
    'Allow access',
    `<h1>${escapeHtml(view.clientName)} wants to access your Gantry account</h1>
<p class="muted">Signed in as ${escapeHtml(view.userEmail)}</p>
${unverifiedNotice(view.unverified)}<p>If you allow it, ${escapeHtml(view.clientName)} will be able to:</p>
<ul class="scopes">
${items}
</ul>
<form method="post" action="${escapeHtml(view.action)}">
${hidden('csrf', view.csrf)}
${hidden('request_state', view.requestState)}
${view.workspaces ? workspaceField(view.workspaces) : ''}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
<p class="muted">You can take this back at any time from your account's connected apps.</p>`,
  );
}

/**
 * The landing page of a sign-in link: opening it spends nothing (mail scanners prefetch links);
 * the button POSTs the token, which signs the browser in.
 */
export function magicLinkPage(token: string, csrf: string): string {
  return layout(
    'Sign in',
    `<h1>Sign in to Gantry</h1>\n<form method="post" action="/auth/magic">\n${hidden('csrf', csrf)}\n<input type="hidden" name="token" value="${escapeHtml(token)}">\n<p><button type="submit">Continue</button></p>\n</form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
