import type { RouteErrorFormat } from './route-config.js';

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

/** What every server-rendered page sends: never framed, never cached, no script. */
const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'Cache-Control': 'no-store',
};

/**
 * Errors of HTML routes as a page a person can read (a browser that gets a 429 or 413 on a
 * form should not be shown JSON); the status and the kernel's headers stay as they are.
 */
export const htmlErrorFormat: RouteErrorFormat = (error) => ({
  type: 'text/html; charset=utf-8',
  headers: PAGE_SECURITY_HEADERS,
  body: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Gantry</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1f2937}</style></head>
<body><h1>${error.status === 429 ? 'Too many attempts' : 'This request cannot be completed'}</h1><p>${escapeHtml(error.message)}</p></body></html>
`,
});
