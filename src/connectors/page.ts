import { escapeHtml as escape } from '../http/html.js';
import type { PageView } from '../http/page-kit.js';
import { nextStep } from '../http/page-forms.js';

const REASONS: Record<string, string> = {
  invalid_state: 'The link request was not recognised. Start the connection again.',
  state_expired: 'The link request expired (they last 10 minutes). Start the connection again.',
  state_already_used: 'This link request was already used.',
  provider_denied: 'The provider did not grant access.',
  access_revoked: 'You no longer have access to this connector.',
  mode_changed: 'The connector switched between shared and per-member accounts meanwhile. Start the connection again.',
  target_changed: 'The connector now points at another server. Start the connection again.',
  token_exchange_failed: 'The provider refused to issue a token.',
  invalid_grant: 'The provider refused the authorization code.',
  provider_unreachable: 'The provider could not be reached.',
};

/**
 * GET /settings/connectors: states the outcome of an OAuth link (the default GANTRY_WEB_URL
 * target), or that a connector waits for the visitor's own account, in words for the person who
 * lands here (the API call that starts a link is their application's to make), and where to go
 * next (docs/kernel.md, Pages: no dead ends).
 */
export function settingsPage(query: Record<string, string>, brand: string): PageView {
  const ok = query.status === 'success';
  const connector = escape(String(query.connector ?? 'The connector').slice(0, 64));
  const reason = String(query.reason ?? '');
  const text = ok
    ? `${connector} is connected. Its tools can be used now.`
    : query.status === 'error'
      ? `${connector} could not be connected. ${escape(REASONS[reason] ?? 'Something went wrong.')}`
      : query.action === 'link'
        ? `${connector} uses each member's own account: link yours to use its tools. Start the link from the application you use with ${escape(brand)} (its connector settings); it brings you to ${connector} to sign in, then back here.`
        : `Nothing to show here: this page tells how connecting a connector went. Connectors are set up from the application you use with ${escape(brand)}.`;
  return {
    title: 'Connectors',
    body: `<h1>Connectors</h1>\n<p id="outcome" data-status="${ok ? 'success' : escape(String(query.status ?? ''))}">${text}</p>${reason && !ok ? `\n<p class="muted">Reason: <code>${escape(reason.slice(0, 64))}</code></p>` : ''}
${nextStep({ href: '/', label: 'Go to the home page' })}`,
  };
}
