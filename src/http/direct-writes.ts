import type { IncomingMessage, ServerResponse } from 'node:http';
import { deflateSync, gzipSync } from 'node:zlib';
import Accept from '@hapi/accept';
import type { ErrorAnswer } from './responses.js';

/** A route's security settings as hapi resolves them (the `_` fields are the values it writes). */
interface ResolvedSecurity {
  _hsts?: string;
  _xframe?: string;
  xss?: 'enabled' | 'disabled' | false;
  noOpen?: boolean;
  noSniff?: boolean;
  referrer?: string | false;
}

/**
 * The headers hapi adds to every answer of a route under its `security` settings (src/http/server.ts),
 * as @hapi/hapi lib/security.js writes them; the kernel's tests compare them with the route's.
 */
export function securityHeaders(security: ResolvedSecurity | null | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!security) return headers;
  if (security._hsts) headers['strict-transport-security'] = security._hsts;
  if (security._xframe) headers['x-frame-options'] = security._xframe;
  if (security.xss === 'enabled') headers['x-xss-protection'] = '1; mode=block';
  else if (security.xss === 'disabled') headers['x-xss-protection'] = '0';
  if (security.noOpen) headers['x-download-options'] = 'noopen';
  if (security.noSniff) headers['x-content-type-options'] = 'nosniff';
  if (security.referrer !== false && security.referrer !== undefined) headers['referrer-policy'] = security.referrer;
  return headers;
}

/** hapi's encodings in its order of preference (@hapi/hapi lib/compression.js). */
const ENCODINGS = ['identity', 'gzip', 'deflate'];

/** The Content-Type hapi writes for a body of `type` (default JSON), its utf-8 charset added as hapi adds it. */
function contentType(type: string | undefined): string {
  if (type === undefined) return 'application/json; charset=utf-8';
  const t = type.trim();
  // hapi's own test (lib/response.js, contentType), alternation and all.
  if (!/^(?:text\/)|(?:application\/(?:json)|(?:javascript))/.test(t) || /; *charset=/.test(t)) return t;
  return `${t}${t.endsWith(';') ? ' ' : '; '}charset=utf-8`;
}

/** The encoding hapi answers in, from the request's Accept-Encoding (identity when it cannot tell). */
function acceptedEncoding(header: string | undefined): string {
  if (!header) return 'identity';
  try {
    return Accept.encoding(header, ENCODINGS);
  } catch {
    return 'identity';
  }
}

/**
 * Writes an answer with what hapi would put on it under the server's settings (src/http/server.ts):
 * the Content-Type and its charset, Cache-Control no-cache unless the answer sets one (a route's
 * default for what is not cached), the route's security headers, and hapi's compression: from
 * the server's `minBytes` on, Vary: accept-encoding and the body in gzip or deflate when the client asks
 * (sent chunked, as hapi streams it); below it, a Content-Length.
 */
export function writeAsHapiWould(
  req: IncomingMessage,
  res: ServerResponse,
  answer: ErrorAnswer,
  route: { security: Record<string, string>; minBytes: number | null; compression: Record<string, object | undefined> },
): void {
  const bytes = Buffer.from(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  res.statusCode = answer.status;
  res.setHeader('content-type', contentType(answer.type));
  for (const name in answer.headers) res.setHeader(name.toLowerCase(), answer.headers[name]);
  if (!res.hasHeader('cache-control')) res.setHeader('cache-control', 'no-cache');
  for (const name in route.security) if (!res.hasHeader(name)) res.setHeader(name, route.security[name]);
  let encoding = 'identity';
  if (route.minBytes !== null && bytes.length >= route.minBytes) {
    const vary = res.getHeader('vary');
    res.setHeader('vary', vary ? `${vary},accept-encoding` : 'accept-encoding');
    encoding = acceptedEncoding(req.headers['accept-encoding']);
  }
  if (encoding !== 'gzip' && encoding !== 'deflate') {
    res.setHeader('content-length', bytes.length);
    res.end(bytes);
    return;
  }
  res.setHeader('content-encoding', encoding);
  res.write(
    encoding === 'gzip' ? gzipSync(bytes, route.compression.gzip) : deflateSync(bytes, route.compression.deflate),
  );
  res.end();
}
