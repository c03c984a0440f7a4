import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import { hmacSha256, randomToken, safeEqual, sha256Hex } from '../lib/crypto.js';
import { escapeHtml } from './html.js';
import { htmlPage, PAGE_ERRORS } from './openapi/declare.js';
import type { PageView } from './page-kit.js';
import { htmlErrorFormat } from './pages.js';

/**
 * The page kit's forms (docs/kernel.md, Pages): what every domain's server-rendered pages use
 * to read cookies and form fields, answer a page or a redirect, set their cookies and check the
 * CSRF value of a form. The layout and the stylesheet are pages.ts; the browser session a page
 * signs in is identity's (src/identity/browser-sessions.ts).
 */

/** The pre-session cookie: a browser without a session yet, which a sign-in form's CSRF value is bound to. */
export const PRE_SESSION_COOKIE = 'gantry_presession';
export const PRE_SESSION_TTL_SEC = 30 * 60;

/** Route options of a page: no API authentication, errors answered as HTML. */
export const pageRoute = (description: string) => ({
  auth: false as const,
  plugins: { gantry: { errorFormat: htmlErrorFormat, responses: htmlPage(description), errors: PAGE_ERRORS } },
});

/** A cookie's value, when it has the form of one of ours (random, base64url). */
export function cookie(request: Request, name: string): string | null {
  const header = request.headers.cookie as string | undefined;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : null;
    }
  }
  return null;
}

/** A string field of a submitted form. */
export const formField = (body: Record<string, unknown>, name: string): string | undefined =>
  typeof body[name] === 'string' ? (body[name] as string) : undefined;

/**
 * A page: never framed (clickjacking, RFC 9700 4.7) nor cached (the kernel's page headers). No
 * form-action directive: browsers apply it to the redirect that follows a consent POST, which
 * goes to the client's origin.
 */
export function page(
  h: ResponseToolkit,
  view: PageView,
  status = 200,
  options: { scripts?: boolean; formActionSelf?: boolean } = {},
): ResponseObject {
  return h.page(view, { status, ...options }).header('Pragma', 'no-cache');
}

export function redirect(h: ResponseToolkit, location: string, status = 302): ResponseObject {
  return h.response().code(status).header('Location', location).header('Cache-Control', 'no-store');
}

/** A link to where a person goes next. */
export interface PageLink {
  href: string;
  label: string;
}

/**
 * The way on from a page that ends a flow or refuses (docs/kernel.md, Pages: no dead ends): the
 * first link as the primary button, the others as secondary ones.
 */
export function nextStep(...links: PageLink[]): string {
  const buttons = links.map(
    (l, i) =>
      `<a class="btn ${i === 0 ? 'btn-primary' : 'btn-secondary'}" href="${escapeHtml(l.href)}">${escapeHtml(l.label)}</a>`,
  );
  return buttons.length ? `<div class="actions next">${buttons.join('\n')}</div>` : '';
}

/** A page that only says something: a heading, one paragraph, and where to go next. */
export function messagePage(title: string, message: string, next: PageLink[] = []): PageView {
  return {
    title,
    body: `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>${next.length ? `\n${nextStep(...next)}` : ''}`,
  };
}

/** The pages' cookies and CSRF values, under this server's public URL and page key. */
export interface PageForms {
  /** Attributes of the pages' cookies (Secure when the public URL is https). */
  attrs(maxAge: number): string;
  /** The pre-session cookie's value, and its Set-Cookie when the browser had none. */
  preSession(request: Request): { value: string; setCookie: string | null };
  /** A form's CSRF value, bound to a browser's secret (its session or pre-session cookie) and the form's purpose. */
  csrfFor(browserSecret: string, purpose: string): string;
  csrfMatches(browserSecret: string | null, purpose: string, presented: unknown): boolean;
}

/** `key`: a secret of this server's (derived from its signing key), never sent anywhere. */
export function createPageForms(publicUrl: string, key: Buffer): PageForms {
  const secure = publicUrl.startsWith('https:');
  const attrs = (maxAge: number) => `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  const csrfFor = (browserSecret: string, purpose: string) =>
    hmacSha256(key, `csrf|${purpose}|${sha256Hex(browserSecret)}`).toString('base64url');
  return {
    attrs,
    preSession(request) {
      const existing = cookie(request, PRE_SESSION_COOKIE);
      if (existing) return { value: existing, setCookie: null };
      const value = randomToken(24);
      return { value, setCookie: `${PRE_SESSION_COOKIE}=${value}; ${attrs(PRE_SESSION_TTL_SEC)}` };
    },
    csrfFor,
    csrfMatches: (browserSecret, purpose, presented) =>
      !!browserSecret && typeof presented === 'string' && safeEqual(presented, csrfFor(browserSecret, purpose)),
  };
}
