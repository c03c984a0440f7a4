import { ACCOUNT_PAGE } from '../identity/page-paths.js';
import type { PluginDeps } from '../services.js';
import { escapeHtml as escape } from '../http/html.js';
import type { PageView } from '../http/page-kit.js';
import { passkeyChoices, stepUpFields } from '../identity/page-factors.js';
import type { InputCut } from './approval-input-cuts.js';
import { approvalPagePath } from './approvals-mcp.js';
import { nextStep } from '../http/page-forms.js';
import { relativeInWords, timeTag } from '../http/page-words.js';

/** The approval page's views (approval-page.ts has its routes): the review, the decision form. */

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

export type Review = Awaited<ReturnType<PluginDeps['services']['connectors']['approvals']['page']['review']>>;

export interface ReviewView extends Review {
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

export function reviewPage(v: ReviewView): PageView {
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
