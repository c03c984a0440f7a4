import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@hapi/hapi';
import { inboundRequestId } from './envelope.js';

/** An answer held in memory: its status, its own headers and its bytes (none for a 304). */
export interface PreparedResponse {
  statusCode: 200 | 304;
  headers: Readonly<Record<string, string>>;
  body: Buffer | null;
}

/**
 * Answers an anonymous GET from memory given the request's headers, or undefined to leave it to
 * the route (nothing prepared yet, stale, or a request it does not cover).
 */
export type PreparedAnswer = (headers: IncomingHttpHeaders) => PreparedResponse | undefined;

/** What the kernel records of every answer, whichever way it was sent. */
export interface AnsweredRequest {
  requestId: string;
  routeId: string;
  method: string;
  path: string;
  status: number;
  receivedMs: number;
  /** The TCP peer and its X-Forwarded-For: the client address is derived by the recorder. */
  peer: string;
  forwardedFor: string | string[] | undefined;
}

/** The headers hapi adds to every response under the server's `security` settings (src/http/server.ts). */
const SECURITY_HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

// By listener: a plugin's server object is its own view of the one server, the listener is shared.
const answersByListener = new WeakMap<Server['listener'], Map<string, { routeId: string; answer: PreparedAnswer }>>();

/**
 * Registers a prepared answer for GETs of exactly `path` (under the registering plugin's prefix,
 * no query string). The route at that path stays the authority: it answers HEAD, every other
 * form of the URL, inject() and anything the answer leaves to it.
 */
export function servePrepared(server: Server, path: string, routeId: string, answer: PreparedAnswer): void {
  const prefix = (server.realm.modifiers.route.prefix as string | undefined) ?? '';
  let answers = answersByListener.get(server.listener);
  if (!answers) answersByListener.set(server.listener, (answers = new Map()));
  answers.set(prefix + path, { routeId, answer });
}

/**
 * Puts the prepared answers in front of hapi's request handler: a GET of a registered path is
 * written from memory without a hapi request (no routing, lifecycle or marshalling, which cost
 * more than the answer), with the headers every hapi response carries (request id, security
 * headers) and recorded as hapi's would be. Anonymous, unlimited routes only: an answer that
 * needs authentication or a rate limit is the route's (docs/kernel.md, Prepared answers).
 */
export function installPreparedAnswers(server: Server, record: ((answered: AnsweredRequest) => void) | null): void {
  const answers = answersByListener.get(server.listener);
  if (!answers || answers.size === 0) return;
  const listener = server.listener;
  const [dispatch] = listener.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  listener.removeListener('request', dispatch);
  listener.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry = req.method === 'GET' ? answers.get(req.url ?? '') : undefined;
    const prepared = entry !== undefined ? entry.answer(req.headers) : undefined;
    if (prepared === undefined) return dispatch(req, res);
    const receivedMs = Date.now();
    const requestId = inboundRequestId(req.headers['x-request-id']);
    res.statusCode = prepared.statusCode;
    for (const name in prepared.headers) res.setHeader(name, prepared.headers[name]);
    res.setHeader('x-request-id', requestId);
    for (const name in SECURITY_HEADERS) res.setHeader(name, SECURITY_HEADERS[name as keyof typeof SECURITY_HEADERS]);
    if (prepared.body !== null) res.setHeader('content-length', prepared.body.length);
    res.end(prepared.body ?? undefined);
    record?.({
      requestId,
      routeId: entry!.routeId,
      method: 'GET',
      path: req.url!,
      status: prepared.statusCode,
      receivedMs,
      peer: req.socket.remoteAddress ?? 'unknown',
      forwardedFor: req.headers['x-forwarded-for'],
    });
  });
}
