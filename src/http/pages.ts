import { createHash } from 'node:crypto';
import type { Brand } from '../config.js';
import type { ResponseObject, Server } from '@hapi/hapi';
import { escapeHtml } from './html.js';
import { PAGE_CSS } from './page-style.js';
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
 * The logo's source for img-src: its origin, or 'self' for a path on this server. Nothing
 * else may load an image, a font or a script: default-src 'none'.
 */
function imageSource(logoUrl: string | null): string {
  if (!logoUrl) return '';
  return logoUrl.startsWith('/') ? " img-src 'self';" : ` img-src ${new URL(logoUrl).origin};`;
}

export function createPageKit(brand: Brand): PageKit {
  const hash = createHash('sha256').update(PAGE_CSS).digest('hex').slice(0, 16);
  const stylesheetPath = `/assets/gantry.${hash}.css`;
  const img = imageSource(brand.logoUrl);
  const name = escapeHtml(brand.name);
  const logo = brand.logoUrl ? `<img src="${escapeHtml(brand.logoUrl)}" alt="">` : '';
  return {
    brand,
    stylesheetPath,
    css: PAGE_CSS,
    csp: (options = {}) =>
      `default-src 'none'; style-src 'self';${img}${options.scripts ? " script-src 'self'; connect-src 'self';" : ''} ${options.formActionSelf ? "form-action 'self'; " : ''}frame-ancestors 'none'; base-uri 'none'`,
    document: (view) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(view.title)} · ${name}</title>
<link rel="stylesheet" href="${stylesheetPath}">${view.head ? `\n${view.head}` : ''}
</head>
<body${view.wide ? ' class="wide"' : ''}>
<header class="brand">${logo}<span>${name}</span></header>
<main>
${view.body}
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

/** The stylesheet route and `h.page()`, on every listener (the status listener's page needs them too). */
export function registerPages(server: Server, kit: PageKit): void {
  server.route({
    method: 'GET',
    path: kit.stylesheetPath,
    options: {
      id: 'pages.stylesheet',
      auth: false,
      plugins: { gantry: { rateLimit: false, responses: { 200: content('text/css', "The pages' stylesheet") } } },
    },
    handler: (_request, h) =>
      h
        .response(kit.css)
        .type('text/css; charset=utf-8')
        .header('Cache-Control', 'public, max-age=31536000, immutable'),
  });
  server.decorate('toolkit', 'page', function (this: { response(v: string): ResponseObject }, view, options = {}) {
    const res = this.response(kit.document(view))
      .code(options.status ?? 200)
      .type('text/html; charset=utf-8');
    for (const [name, value] of Object.entries(pageHeaders(kit, options))) res.header(name, value);
    return res;
  } as (view: PageView, options?: PageOptions) => ResponseObject);
}

/**
 * Errors of HTML routes as a page a person can read (a browser that gets a 429 or 413 on a
 * form should not be shown JSON); the status and the kernel's headers stay as they are.
 */
export const htmlErrorFormat: RouteErrorFormat = (error, pages) => {
  const title = error.status === 429 ? 'Too many attempts' : 'This request cannot be completed';
  return {
    type: 'text/html; charset=utf-8',
    headers: pageHeaders(pages),
    body: pages.document({ title, body: `<h1>${title}</h1>\n<p>${escapeHtml(error.message)}</p>` }),
  };
};
