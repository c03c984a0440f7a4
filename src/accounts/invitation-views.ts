import { escapeHtml as escape } from '../http/html.js';
import type { PageView } from '../http/page-kit.js';
import { messagePage, nextStep, type PageLink } from '../http/page-forms.js';
import { timeTag } from '../http/page-words.js';
import type { InvitationSummary } from './invitation-acceptance.js';

/** The invitation page's states (docs/accounts.md, Invitation: the page). */

export const invitationPath = (token: string) => `/invitations/accept?token=${encodeURIComponent(token)}`;

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escape(value)}">`;

/** Who invites, to what, as what, until when: said on every state of the page. */
export function invitationIntro(s: InvitationSummary, brand: string): string {
  return `<p><strong>${escape(s.inviterName)}</strong> invited you to join <strong>${escape(s.accountName)}</strong> on ${escape(brand)} as <strong>${escape(s.role)}</strong>. The invitation was sent to <strong>${escape(s.email)}</strong>; it works until ${timeTag(s.expiresAt)}.</p>`;
}

/** A note when the browser is signed in as someone other than the invitee. */
export const otherUserNote = (signedInAs: string, s: InvitationSummary) =>
  `<p class="warning" role="note">This browser is signed in as <strong>${escape(signedInAs)}</strong>, but the invitation is for <strong>${escape(s.email)}</strong>.</p>`;

const alert = (error: string) => (error ? `<p class="error" role="alert">${escape(error)}</p>\n` : '');

/** Signed in as the invitee: one button accepts (CSRF bound to the browser session). */
export function acceptView(v: {
  summary: InvitationSummary;
  brand: string;
  token: string;
  csrf: string;
  error?: string;
  /** HTML after the error (a link to what fixes it). */
  remedy?: string;
}): PageView {
  return {
    title: 'Accept your invitation',
    body: `<h1>Join ${escape(v.summary.accountName)}</h1>
${invitationIntro(v.summary, v.brand)}
${alert(v.error ?? '')}${v.remedy ?? ''}<form method="post" action="${escape(invitationPath(v.token))}">
${hidden('action', 'accept')}
${hidden('csrf', v.csrf)}
<p>You are signed in as <strong>${escape(v.summary.email)}</strong>.</p>
<div class="actions"><button class="btn btn-primary" type="submit">Accept the invitation</button></div>
</form>
<p class="muted next">Not interested? Close this page: the invitation expires on its own.</p>`,
  };
}

/** No user has the invited address yet: registering with it accepts at once. */
export function registerView(v: {
  summary: InvitationSummary;
  brand: string;
  token: string;
  csrf: string;
  note?: string;
  error?: string;
  fullName?: string;
}): PageView {
  return {
    title: 'Accept your invitation',
    body: `<h1>Join ${escape(v.summary.accountName)}</h1>
${invitationIntro(v.summary, v.brand)}
${v.note ?? ''}${alert(v.error ?? '')}<p>Create your ${escape(v.brand)} account to accept.</p>
<form method="post" action="${escape(invitationPath(v.token))}">
${hidden('action', 'register')}
${hidden('csrf', v.csrf)}
<label for="email">Email</label><input id="email" type="email" value="${escape(v.summary.email)}" readonly autocomplete="username">
<label for="full_name">Your name (optional)</label><input id="full_name" name="full_name" maxlength="180" autocomplete="name" value="${escape(v.fullName ?? '')}">
<label for="password">Choose a password (8 or more characters)</label><input id="password" name="password" type="password" minlength="8" maxlength="128" required autocomplete="new-password">
<div class="actions"><button class="btn btn-primary" type="submit">Create my account and join</button></div>
</form>`,
  };
}

/** Done: where to go now. */
export function acceptedView(accountName: string, role: string, next: PageLink[]): PageView {
  return {
    title: 'Invitation accepted',
    body: `<h1>Welcome to ${escape(accountName)}</h1>
<p class="notice" role="status">You are now a member of <strong>${escape(accountName)}</strong> as ${escape(role)}.</p>
${nextStep(...next)}`,
  };
}

/** A link that no longer works: who can fix it, and the way on. */
export const goneView = (next: PageLink[]) =>
  messagePage(
    'This invitation cannot be used',
    'This invitation link is invalid, was already used, was replaced by a newer one, or has expired (links work for 7 days). Ask the person who invited you to send it again: they can resend it from the account’s members.',
    next,
  );
