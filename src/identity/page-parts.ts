import type { ResponseToolkit } from '@hapi/hapi';
import { escapeHtml as escape } from '../http/html.js';
import { htmlPage, PAGE_ERRORS } from '../http/openapi/declare.js';
import { htmlErrorFormat } from '../http/pages.js';
import { API } from '../http/paths.js';
import type { GantryRouteConfig, RateLimitRule } from '../http/route-config.js';

/** What identity's own pages (confirmation, reset, forgot password) share. */

/** Pages that post only to themselves: form-action 'self' on top of the kernel's page CSP. */
export const identityPage = (h: ResponseToolkit, status: number, title: string, body: string) =>
  h.page({ title, body: `<h1>${escape(title)}</h1>\n${body}` }, { status, formActionSelf: true });

/**
 * Where a flow goes back to once done (a reset's "Continue"): a page on this server only, never
 * another origin (no open redirect): one leading slash, no backslash, no white space. That is
 * the authorize request a sign-in page was showing, or a page of another kind (an approval, an
 * invitation, the account center); never a JSON endpoint, nor a page of these flows, whose links
 * spend a secret (a sign-in link someone else asked for must not be one click away).
 */
export function returnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length > 4096 || !/^\/(?![/\\])[^\s\\]*$/.test(value)) return '';
  // No dot segments ("/x/../auth/…", encoded or not): the browser would resolve them away.
  if (/\/(\.|%2e)/i.test(value.split('?')[0])) return '';
  if (value.startsWith(`${API}/oauth/authorize?`)) return value;
  return value.startsWith(`${API}/`) || value.startsWith('/auth/') ? '' : value;
}

/** A form field as a trimmed, bounded string. */
export const field = (value: unknown): string => (typeof value === 'string' ? value.trim().slice(0, 512) : '');

export const hiddenReturn = (to: string) =>
  to ? `<input type="hidden" name="return_to" value="${escape(to)}">\n` : '';

/** The error summary (focused by the layout, docs/kernel.md, Pages) and a notice. */
export const alerts = (error: string, notice = '') =>
  `${error ? `<p class="error" role="alert">${escape(error)}</p>\n` : ''}${notice ? `<p class="notice" role="status">${escape(notice)}</p>\n` : ''}`;

/** Route options of identity's pages: no API authentication, errors as pages, the route's limit. */
export const identityPageConfig = (
  rateLimit: RateLimitRule | false,
  responses: GantryRouteConfig['responses'] = htmlPage('A sign-in flow page'),
) => ({
  auth: false as const,
  plugins: { gantry: { errorFormat: htmlErrorFormat, rateLimit, responses, errors: PAGE_ERRORS } },
});
