import Accept from '@hapi/accept';
import type { Request } from '@hapi/hapi';
import { API } from './paths.js';

/**
 * Whether a request is a person's browser asking for a page: its Accept header prefers
 * text/html to JSON (browsers send `text/html,…,*\/*;q=0.8`; API clients send JSON, `*\/*` or
 * nothing, and keep getting JSON). Parsed by @hapi/accept, q-values and all.
 */
export function prefersHtml(request: Request): boolean {
  const header = request.headers.accept;
  if (typeof header !== 'string' || !header.includes('html')) return false;
  return Accept.mediaType(header, ['application/json', 'text/html']) === 'text/html';
}

/**
 * Paths whose answers are for machines whatever the Accept header says: the versioned API
 * (and with it the OAuth and MCP endpoints under it) and the well-known discovery documents
 * (RFC 8615). A browser that strays there gets the JSON envelope as every client does.
 */
export function machinePath(path: string): boolean {
  return path === API || path.startsWith(`${API}/`) || path.startsWith('/.well-known/');
}
