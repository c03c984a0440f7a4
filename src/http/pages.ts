import { createHash } from 'node:crypto';
import type { Brand } from '../config-brand.js';
import type { ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';
import { escapeHtml } from './html.js';
import { requestIdOf } from './envelope.js';
import { withAutofocus } from './page-focus.js';
import { tooManyAttempts } from './page-words.js';
import { PAGE_CSS } from './page-style.js';
import { PAGE_CSS_ADAPT } from './page-style-adapt.js';
import { content } from './openapi/declare.js';
import type { RouteErrorFormat } from './route-config.js';
import type { PageKit, PageView } from './page-kit.js';

interface PageOptions {
  status?: number;
  formActionSelf?: boolean;
  /** The page loads script files of this server (never inline script): docs/kernel.md, Pages. */
  scripts?: boolean;
}

declare module '@hapi/hapi' {
  interface ResponseToolkit {
    /** A page in the shared layout with the pages' headers: not framed, not cached, strict CSP. */
    page(view: PageView, options?: PageOptions): ResponseObject;
  }
}

/**
 * The images a page may load (img-src): the logo's origin, or 'self' for a path on this server
 * or for the brand's monogram icon when there is no logo. Nothing else may load an image, a
 * font or a script: default-src 'none'.
 */
function imageSource(logoUrl: string | null): string {
  return logoUrl && !logoUrl.startsWith('/') ? ` img-src ${new URL(logoUrl).origin};` : " img-src 'self';";
}

/**
 * The pages' icon when no logo is configured: the brand's first letter on the primary colour
 * (docs/kernel.md, Pages). Plain SVG, no script; the letter is escaped like any text.
 */
function monogram(name: string): string {
  const letter = escapeHtml((Array.from(name.trim())[0] ?? 'G').toUpperCase());
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f5fbf"/><text x="16" y="22.5" text-anchor="middle" font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" font-size="19" font-weight="700" fill="#fff">${letter}</text></svg>`;
}

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

export function createPageKit(brand: Brand): PageKit {
  const css = PAGE_CSS + PAGE_CSS_ADAPT;
  const stylesheetPath = `/assets/gantry.${hashOf(css)}.css`;
  const icon = monogram(brand.name);
  const iconPath = `/assets/icon.${hashOf(icon)}.svg`;
  const iconLink = brand.logoUrl
    ? `<link rel="icon" href="${escapeHtml(brand.logoUrl)}">`
    : `<link rel="icon" href="${iconPath}" type="image/svg+xml">`;
  const img = imageSource(brand.logoUrl);
  const name = escapeHtml(brand.name);
  const logo = brand.logoUrl ? `<img src="${escapeHtml(brand.logoUrl)}" alt="">` : '';
  return {
    brand,
    stylesheetPath,
    css,
    iconPath,
    icon,
    csp: (options = {}) =>
      `default-src 'none'; style-src 'self';${img}${options.scripts ? " script-src 'self'; connect-src 'self';" : ''} ${options.formActionSelf ? "form-action 'self'; " : ''}frame-ancestors 'none'; base-uri 'none'`,
    document: (view) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(view.title)} · ${name}</title>
${iconLink}
<link rel="stylesheet" href="${stylesheetPath}">${view.head ? `\n${view.head}` : ''}
</head>
<body${view.wide ? ' class="wide"' : ''}>
<header class="brand">${logo}<span>${name}</span></header>
<main>
${view.wide || view.autofocus === false ? view.body : withAutofocus(view.body)}
</main>
</body>
</html>
`,
  };
}

/** The pages' headers: never framed (clickjacking), never cached (forms carry CSRF values). */
function pageHeaders(
  kit: PageKit,
  options: { formActionSelf?: boolean; scripts?: boolean } = {},
): Record<string, string> {
  return { 'X-Frame-Options': 'DENY', 'Content-Security-Policy': kit.csp(options), 'Cache-Control': 'no-store' };
}

/** A reference a person can quote when they ask for help: the request id, as in X-Request-Id and the log. */
const referenceLine = (requestId: string) =>
  `<p class="muted reference">If you ask for help, quote this reference: <code>${escapeHtml(requestId)}</code></p>`;

/**
 * A page that answers an error and offers no form gets the request's reference at its end
 * (docs/kernel.md, Pages): the form pages (a wrong password, a code to correct) need none.
 */
const needsReference = (status: number, body: string) => status >= 400 && !/<form\b/.test(body);

/**
 * The stylesheet and icon routes, `/favicon.ico` and `h.page()`, on every listener (the status
 * listener's page needs them too).
 */
export function registerPages(server: Server, kit: PageKit): void {
  const asset = (id: string, path: string, type: string, body: string, cache: string, description: string) =>
    server.route({
      method: 'GET',
      path,
      options: {
        id,
        auth: false,
        plugins: { gantry: { rateLimit: false, responses: { 200: content(type.split(';')[0], description) } } },
      },
      // An SVG opened on its own is a document: nothing in it may load or run.
      handler: (_request, h) =>
        h
          .response(body)
          .type(type)
          .header('Cache-Control', cache)
          .header('Content-Security-Policy', "default-src 'none'"),
    });
  const forever = 'public, max-age=31536000, immutable';
  asset('pages.stylesheet', kit.stylesheetPath, 'text/css; charset=utf-8', kit.css, forever, "The pages' stylesheet");
  asset('pages.icon', kit.iconPath, 'image/svg+xml', kit.icon, forever, "The pages' icon (the brand's monogram)");
  // Browsers ask for it on their own (on a JSON answer too): the same icon, never the envelope.
  asset('pages.favicon', '/favicon.ico', 'image/svg+xml', kit.icon, 'public, max-age=86400', "The brand's icon");
  server.decorate('toolkit', 'page', function (this: ResponseToolkit, view: PageView, options: PageOptions = {}) {
    const status = options.status ?? 200;
    const shown = needsReference(status, view.body)
      ? { ...view, body: `${view.body}\n${referenceLine(requestIdOf(this.request))}` }
      : view;
    const res = this.response(kit.document(shown)).code(status).type('text/html; charset=utf-8');
    for (const [name, value] of Object.entries(pageHeaders(kit, options))) res.header(name, value);
    return res;
  });
}

/** What the kernel's error pages say, by status: a title, the words, and the way on. */
function errorWords(error: Parameters<RouteErrorFormat>[0]): { title: string; text: string } {
  if (error.status === 429) return { title: 'Too many attempts', text: tooManyAttempts(error.retryAfterSec) };
  if (error.status === 404)
    return {
      title: 'Page not found',
      text: 'There is no page at this address. Check the address for a typo; if you followed a link, it may be out of date.',
    };
  if (error.status >= 500)
    return {
      title: 'Something went wrong',
      text: 'The server could not complete this request. Try again in a moment.',
    };
  const text = /[.!?]$/.test(error.message) ? error.message : `${error.message}.`;
  return { title: 'This request cannot be completed', text };
}

/**
 * Errors of HTML routes, and a browser's request for a path that does not exist, as a page a
 * person can read (a browser that gets a 429 or 413 on a form should not be shown JSON): the
 * status and the kernel's headers stay as they are; the page leads back to the home page.
 */
export const htmlErrorFormat: RouteErrorFormat = (error, pages) => {
  const { title, text } = errorWords(error);
  const body = `<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(text)}</p>
<div class="actions"><a class="btn btn-secondary" href="${escapeHtml(error.homePath)}">Go to the home page</a></div>
${error.status === 429 ? '' : referenceLine(error.requestId)}`;
  return { type: 'text/html; charset=utf-8', headers: pageHeaders(pages), body: pages.document({ title, body }) };
};
