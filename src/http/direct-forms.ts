import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Server } from '@hapi/hapi';
import { clientTimeout } from '@hapi/boom';
import type { TrustedProxy } from '../config.js';
import { clientAddressFrom, trustedProxyTest } from './client-address.js';
import { inboundRequestId } from './envelope.js';
import type { AnsweredRequest } from './prepared.js';
import { type RateDecision, writeAllowedRateLimitHeaders } from './rate-limit.js';
import type { ErrorAnswer, ErrorAnswers } from './responses.js';
import type { GantryRouteConfig } from './route-config.js';
import { securityHeaders, writeAsHapiWould } from './direct-writes.js';

const FORM = 'application/x-www-form-urlencoded';

/** What a direct form's handler is given: the form as hapi's parser gives it, and who sent it. */
export interface DirectFormCall {
  form: Record<string, string | string[] | undefined>;
  headers: IncomingHttpHeaders;
  /** The client address (docs/kernel.md, Client address: behind a trusted proxy, the forwarded one). */
  address: string;
  /**
   * The limit's decision the handler reached (hapi's path keeps it in request.app.rateLimit):
   * it gives the X-RateLimit headers of the answer, an error's included.
   */
  rateLimit?: RateDecision;
}

/** The route's answer: its status, JSON body and own headers. */
export interface DirectAnswer {
  status: number;
  body: object;
  headers: Record<string, string>;
}

/** Answers as the route's handler does; what it throws is answered by the kernel's error mapping. */
export type DirectFormHandler = (call: DirectFormCall) => Promise<DirectAnswer>;

interface Entry {
  routeId: string;
  handler: DirectFormHandler;
}

interface RouteSettings {
  config: GantryRouteConfig;
  maxBytes: number;
  timeoutMs: number | false;
  security: Record<string, string>;
  minBytes: number | null;
  compression: Record<string, object | undefined>;
}

// By listener, as prepared answers are: a plugin's server object is its own view of the one server.
const formsByListener = new WeakMap<Server['listener'], Map<string, Entry>>();

/**
 * Registers a direct answer for form POSTs of exactly `path` (under the registering plugin's
 * prefix, no query string): `handler` must answer what the route answers, the route stays the
 * authority for every request it is not given (docs/kernel.md, Direct forms).
 */
export function serveDirectForm(server: Server, path: string, routeId: string, handler: DirectFormHandler): void {
  const prefix = (server.realm.modifiers.route.prefix as string | undefined) ?? '';
  let forms = formsByListener.get(server.listener);
  if (!forms) formsByListener.set(server.listener, (forms = new Map()));
  forms.set(prefix + path, { routeId, handler });
}

/** The request's media type without parameters, lower-cased (hapi's request.mime). */
const mediaType = (header: string | undefined) => header?.split(';', 1)[0].trim().toLowerCase();

/**
 * Whether the request is one the direct path reads exactly as hapi's would: a urlencoded body
 * of a declared length within the route's limit, with nothing to decode or negotiate first.
 * Anything else is hapi's (its 413, 415, 100-continue, chunked and compressed bodies).
 */
function plainForm(req: IncomingMessage, maxBytes: number): boolean {
  const h = req.headers;
  const length = Number(h['content-length']);
  return (
    mediaType(h['content-type']) === FORM &&
    Number.isInteger(length) &&
    length <= maxBytes &&
    h['transfer-encoding'] === undefined &&
    h['content-encoding'] === undefined &&
    h.expect === undefined
  );
}

const TIMED_OUT = Symbol('timed out');

/**
 * The body; TIMED_OUT when it did not arrive within the route's payload timeout (then, as hapi
 * does, the rest is read and dropped before the 408 is answered); null when the client went away.
 */
function readBody(req: IncomingMessage, timeoutMs: number | false): Promise<Buffer | typeof TIMED_OUT | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let late = false;
    const timer = timeoutMs === false ? null : setTimeout(() => (late = true), timeoutMs);
    req.on('data', (chunk: Buffer) => {
      if (!late) chunks.push(chunk);
    });
    req.on('end', () => {
      if (timer) clearTimeout(timer);
      resolve(late ? TIMED_OUT : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    req.on('close', () => {
      if (timer) clearTimeout(timer);
      if (!req.complete) resolve(null);
    });
  });
}

/**
 * Puts the direct forms in front of hapi's request handler (after the prepared answers): a
 * plain form POST of a registered path is read, handed to the route's own handler and written
 * without a hapi request, as hapi's answer would be (docs/kernel.md, Direct forms), and recorded
 * like any other. Meant for a hot protocol endpoint (the OAuth token endpoint) whose routing,
 * lifecycle and body parsing cost more than its work.
 */
export function installDirectForms(
  server: Server,
  record: ((answered: AnsweredRequest) => void) | null,
  kernel: { proxies: readonly TrustedProxy[]; answerError: ErrorAnswers },
): void {
  const { proxies, answerError } = kernel;
  const forms = formsByListener.get(server.listener);
  if (!forms || forms.size === 0) return;
  const compression = server.settings.compression;
  const minBytes =
    compression === false ? null : ((typeof compression === 'object' ? compression.minBytes : undefined) ?? 1024);
  const settings = new Map<Entry, RouteSettings>();
  for (const entry of forms.values()) {
    const route = server.lookup(entry.routeId)?.settings;
    if (!route) throw new Error(`direct form for unknown route ${entry.routeId}`);
    settings.set(entry, {
      config: ((route.plugins as { gantry?: GantryRouteConfig }).gantry ?? {}) as GantryRouteConfig,
      maxBytes: route.payload?.maxBytes ?? 1024 * 1024,
      timeoutMs: (route.payload?.timeout as number | false | undefined) ?? 10_000,
      security: securityHeaders(route.security as Parameters<typeof securityHeaders>[0]),
      minBytes,
      compression: (route.compression ?? {}) as Record<string, object | undefined>,
    });
  }
  const trusted = proxies.length > 0 ? trustedProxyTest(proxies) : () => false;

  // hapi's clean stop ends every connection it is not answering on: it does not see ours. So
  // from its first stop step on, requests are hapi's, and the stop waits for ours in flight.
  let stopping = false;
  const inFlight = new Set<ServerResponse>();
  let drained: (() => void) | null = null;
  server.ext('onPreStop', async () => {
    stopping = true;
    if (inFlight.size > 0) await new Promise<void>((resolve) => (drained = resolve));
  });

  const listener = server.listener;
  const [dispatch] = listener.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  listener.removeListener('request', dispatch);
  listener.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry = req.method === 'POST' && !stopping ? forms.get(req.url ?? '') : undefined;
    const route = entry && settings.get(entry);
    if (!entry || !route || !plainForm(req, route.maxBytes)) return dispatch(req, res);
    void answer(entry, route, req, res);
  });

  async function answer(entry: Entry, route: RouteSettings, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedMs = Date.now();
    const requestId = inboundRequestId(req.headers['x-request-id']);
    const peer = req.socket.remoteAddress ?? 'unknown';
    const forwardedFor = req.headers['x-forwarded-for'];
    const address = clientAddressFrom(peer, forwardedFor, trusted);
    let recorded = false;
    const recordOnce = (status: number) => {
      if (recorded) return;
      recorded = true;
      record?.({
        requestId,
        routeId: entry.routeId,
        method: 'POST',
        path: req.url!,
        status,
        receivedMs,
        peer,
        forwardedFor,
        headers: req.headers,
      });
    };
    inFlight.add(res);
    res.once('close', () => {
      // hapi records a request its client left before the answer as 499 (disconnectStatusCode).
      if (!res.writableEnded) recordOnce(499);
      inFlight.delete(res);
      if (inFlight.size === 0) drained?.();
    });

    const body = await readBody(req, route.timeoutMs);
    if (body === null) return;
    const call: DirectFormCall = { form: {}, headers: req.headers, address };
    const failed = (err: unknown): ErrorAnswer =>
      answerError(err, {
        requestId,
        route: entry.routeId,
        method: 'post',
        path: req.url!,
        ip: address,
        format: route.config.errorFormat,
        decision: call.rateLimit,
        durationMs: Math.round((Date.now() - receivedMs) * 100) / 100,
      });
    let result: ErrorAnswer;
    if (body === TIMED_OUT) result = failed(clientTimeout());
    else {
      try {
        call.form = parseQuery(body.toString('utf8'));
        const done = await entry.handler(call);
        const headers: Record<string, string> = { ...done.headers, 'x-request-id': requestId };
        if (call.rateLimit) writeAllowedRateLimitHeaders(headers, call.rateLimit);
        result = { status: done.status, body: done.body, headers };
      } catch (err) {
        result = failed(err);
      }
    }
    if (res.destroyed) return;
    writeAsHapiWould(req, res, result, route);
    recordOnce(result.status);
  }
}
