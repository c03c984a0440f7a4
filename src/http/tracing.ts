import type { Request, Server } from '@hapi/hapi';
import type { TraceSpan, Tracing } from '../lib/tracing.js';
import { statusOf } from './metrics.js';
import type { AnsweredRequest } from './prepared.js';

/** A header's single value; a repeated traceparent is malformed (W3C Trace Context, 3.2) and ignored. */
const single = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The port of a Host header (`host:port`, `[v6]:port`), if it names one. */
function portOf(host: string | undefined): number | undefined {
  const match = host ? /:(\d+)$/.exec(host) : null;
  return match ? Number(match[1]) : undefined;
}

/**
 * The server span's opening attributes (OpenTelemetry HTTP semantic conventions): never the
 * query string, which can carry secrets, nor any header but the trace context.
 */
function serverAttributes(method: string, scheme: string, path: string, host: string | undefined, version?: string) {
  return {
    'http.request.method': method,
    'url.scheme': scheme,
    'url.path': path,
    'server.address': host?.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1'),
    'server.port': portOf(host),
    'network.protocol.version': version,
  };
}

/** Where a request's span is kept from onRequest to the response event, with the spans that end with it. */
type TracedApp = { traceSpan?: TraceSpan; endingWith?: TraceSpan[] };

/**
 * Ends `span` when the request's response has been sent, with the request's own span (a
 * streamed answer's when its stream ends): a span of what the request serves (an MCP request's,
 * src/mcp/spans.ts) that lasts as long as its answer.
 */
export function endWithResponse(request: Request, span: TraceSpan): void {
  const app = request.app as TracedApp;
  (app.endingWith ??= []).push(span);
}

/** Ends a server span with its route (when one matched) and status; a 5xx marks it failed. */
function endServerSpan(tracing: Tracing, span: TraceSpan, method: string, route: string | undefined, status: number) {
  if (route !== undefined) {
    span.setAttribute('http.route', route);
    span.updateName(`${method} ${route}`);
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) tracing.recordError(span, String(status));
  span.end();
}

/**
 * A server span per request (docs/operations.md, Traces): opened at onRequest, continuing an
 * incoming traceparent, active for everything the request runs (hapi has no hook around the
 * lifecycle, so onRequest enters it: every step after it inherits it), and ended by the
 * response event, which hapi emits once the response is sent: a streamed answer's span lasts
 * until its stream ends. Nothing is registered with tracing off.
 */
export function registerRequestTracing(server: Server, tracing: Tracing): void {
  if (!tracing.enabled) return;
  const scheme = server.info.protocol;
  server.ext('onRequest', (request, h) => {
    const method = request.method.toUpperCase();
    const span = tracing.startSpan(method, {
      kind: 'server',
      root: true,
      traceparent: single(request.headers.traceparent),
      tracestate: single(request.headers.tracestate),
      attributes: serverAttributes(method, scheme, request.path, request.info.host, request.raw.req.httpVersion),
    });
    (request.app as TracedApp).traceSpan = span;
    tracing.enter(span);
    return h.continue;
  });
  server.events.on('response', (request: Request) => {
    const { traceSpan: span, endingWith } = request.app as TracedApp;
    if (endingWith) for (const child of endingWith) child.end();
    if (!span) return;
    // hapi's not-found answer is a route of its own (method `_special`): no route matched.
    const route = (request.route.method as string) === '_special' ? undefined : request.route.path;
    endServerSpan(tracing, span, request.method.toUpperCase(), route, statusOf(request));
  });
}

/**
 * The recorder of prepared answers (src/http/prepared.ts), with a server span for each when
 * tracing is on: such an answer never reaches hapi, so its span is made here, from the time
 * it arrived to now. Its route is its path: a prepared answer serves exactly one.
 */
export function tracePreparedAnswers(
  record: ((answered: AnsweredRequest) => void) | null,
  tracing: Tracing,
  scheme: string,
): ((answered: AnsweredRequest) => void) | null {
  if (!tracing.enabled) return record;
  return (a) => {
    record?.(a);
    const span = tracing.startSpan(a.method, {
      kind: 'server',
      root: true,
      traceparent: single(a.headers.traceparent),
      tracestate: single(a.headers.tracestate),
      startTime: a.receivedMs,
      attributes: serverAttributes(a.method, scheme, a.path, single(a.headers.host)),
    });
    endServerSpan(tracing, span, a.method, a.path, a.status);
  };
}
