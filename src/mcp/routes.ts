import Joi from 'joi';
import { empty, jsonBody } from '../http/openapi/declare.js';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Request as HapiRequest, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import { DomainError, forbidden } from '../http/errors.js';
import { apiUrl } from '../http/paths.js';
import { countOpenStream } from '../http/sse.js';
import { endWithResponse } from '../http/tracing.js';
import type { Metrics } from '../lib/metrics.js';
import type { TraceSpan } from '../lib/tracing.js';
import type { PluginDeps } from '../services.js';
import type { McpCaller } from './caller.js';
import { settleMcpSpan, startMcpSpan } from './spans.js';
import { mcpErrorFormat, rpcErrorBody } from './wire.js';

/** The interface's limit for the whole endpoint, per user (docs/mcp.md, Limits). */
const MCP_RATE_LIMIT = { limit: 60, windowSec: 60 };

/** Request headers that describe this hop, or the credential (verified here, never handed on). */
const NOT_FORWARDED = new Set([
  'authorization',
  'cookie',
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

function forwardedHeaders(request: HapiRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (NOT_FORWARDED.has(name) || value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
  }
  return headers;
}

async function* withOpeningComment(stream: Readable): AsyncGenerator<Buffer> {
  yield Buffer.from(': open\n\n');
  for await (const chunk of stream) yield chunk as Buffer;
}

/** The SDK's web Response as a hapi response: status, headers, and the body streamed, not buffered. */
function toHapi(request: HapiRequest, h: ResponseToolkit, response: Response, metrics: Metrics) {
  const stream = response.body ? Readable.fromWeb(response.body as unknown as NodeReadableStream) : undefined;
  const standalone =
    request.method === 'get' && response.headers.get('content-type')?.startsWith('text/event-stream') === true;
  // The head of a GET stream goes out with its first bytes: an SSE comment sends it at once,
  // where the SDK's first bytes are a keep-alive 15 s later (docs/mcp.md, The GET stream).
  const body = standalone && stream ? Readable.from(withOpeningComment(stream), { objectMode: false }) : stream;
  const res = h.response(body).code(response.status);
  response.headers.forEach((value, name) => {
    res.header(name, value);
  });
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // An event stream must reach the client event by event: no gzip (which holds bytes back)
    // here, no buffering in a proxy in front.
    (request.info as { acceptEncoding: string | null }).acceptEncoding = 'identity';
    res.header('X-Accel-Buffering', 'no');
    // GET: a 2025-11-25 session's standalone stream; POST: a request answered as a stream.
    countOpenStream(metrics, request.method === 'get' ? 'mcp-get' : 'mcp-post', request.raw.res);
  }
  return res;
}

/**
 * `{public}/api/v1/mcp` (docs/mcp.md): one route for POST, GET and DELETE, so the one rate limit
 * counts them all. Order: Origin (DNS rebinding), the MCP token and its workspace (the `mcp`
 * strategy), the kernel's per-user rate limit, then the SDK.
 */
export function mcpRoutes(app: PluginDeps): ServerRoute[] {
  const { mcp } = app.services;
  const { tracing } = app.kernel;
  const { publicUrl } = app.kernel.config;
  const endpoint = apiUrl(publicUrl, '/mcp');
  const ownOrigin = new URL(publicUrl).origin;

  /** The direct path's answer to a POST when it has one (direct.ts), else the SDK's. */
  async function serve(
    request: HapiRequest,
    h: ResponseToolkit,
    method: string,
    payload: unknown,
    caller: McpCaller,
    span?: TraceSpan,
  ) {
    if (payload !== undefined) {
      const direct = await mcp.answerDirectly(request.headers, payload, caller);
      if (direct !== null) {
        if (span) settleMcpSpan(tracing, span, direct.answer);
        return h.response(direct.body).type(direct.type);
      }
    }
    // The client going away ends the exchange (and a GET stream) in the SDK too; a response
    // written to its end has nothing left to end (and aborting costs an error per request).
    const abort = new AbortController();
    const { res } = request.raw;
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const web = new Request(endpoint, {
      method,
      headers: forwardedHeaders(request),
      body: payload === undefined ? undefined : JSON.stringify(payload),
      signal: abort.signal,
    });
    return toHapi(request, h, await mcp.handle(web, payload, caller), app.kernel.metrics);
  }

  return [
    {
      method: '*',
      path: '/mcp',
      options: {
        id: 'mcp',
        auth: 'mcp',
        payload: { parse: true, allow: 'application/json' },
        plugins: {
          gantry: {
            rateLimit: MCP_RATE_LIMIT,
            errorFormat: mcpErrorFormat,
            errorSchema: Joi.object().unknown(),
            responses: {
              200: jsonBody(Joi.object().unknown(), 'A JSON-RPC response, or its SSE stream', {
                otherTypes: ['text/event-stream'],
              }),
              202: empty('A notification or response accepted'),
              400: jsonBody(Joi.object().unknown(), 'A JSON-RPC error (a batch, a bad message)'),
              404: jsonBody(Joi.object().unknown(), 'A JSON-RPC error: the session is unknown or ended'),
              405: jsonBody(Joi.object().unknown(), 'Only POST, GET and DELETE'),
              406: jsonBody(
                Joi.object().unknown(),
                'A JSON-RPC error: a 2025-11-25 session request must accept application/json and text/event-stream',
              ),
              503: jsonBody(Joi.object().unknown(), 'A JSON-RPC error: no room for another session (Retry-After)'),
            },
            errors: ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'METHOD_NOT_ALLOWED'],
          },
        },
        ext: {
          onPreAuth: {
            // Browsers send Origin; a page of another origin must not reach the endpoint even
            // through a name that resolves here. Clients outside a browser send none.
            method: (request, h) => {
              const origin = request.headers.origin;
              if (origin !== undefined && origin !== ownOrigin)
                throw forbidden(`Origin ${String(origin).slice(0, 100)} is not allowed`);
              return h.continue;
            },
          },
        },
      },
      handler: async (request, h) => {
        const method = request.method.toUpperCase();
        if (method !== 'POST' && method !== 'GET' && method !== 'DELETE')
          throw new DomainError('METHOD_NOT_ALLOWED', 'Use POST, GET or DELETE', undefined, {
            Allow: 'GET, POST, DELETE',
          });
        const payload = method === 'POST' ? (request.payload ?? undefined) : undefined;
        if (Array.isArray(payload))
          return h.response(rpcErrorBody(-32600, 'JSON-RPC batches are not supported')).code(400);
        const { caller } = request.auth.artifacts as { caller: McpCaller };
        // The JSON-RPC request's span (spans.ts), active for whichever path answers it.
        const span = startMcpSpan(tracing, request.headers, payload);
        if (!span) return serve(request, h, method, payload, caller);
        endWithResponse(request, span);
        return tracing.withSpan(span, () => serve(request, h, method, payload, caller, span));
      },
    },
  ];
}
