import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@hapi/hapi';
import type { Principal } from './auth.js';
import { inboundRequestId, successEnvelope } from './envelope.js';
import { type RateDecision, writeAllowedRateLimitHeaders } from './rate-limit.js';
import type { GantryRouteConfig } from './route-config.js';

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
  /** The request's headers (its trace context, src/http/tracing.ts). */
  headers: IncomingHttpHeaders;
  /** The authenticated caller, when there is one. */
  userId?: string;
}

/** The headers hapi adds to every response under the server's `security` settings (src/http/server.ts). */
const SECURITY_HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/** hapi's headers on a JSON answer with the server's default (uncached) route settings. */
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' } as const;

/**
 * The data of an authenticated GET's success envelope for its caller, held in memory, or
 * undefined to leave the request to the route (nothing current for that caller).
 */
export type CallerAnswer = (principal: Principal) => unknown;

/** How the kernel knows, without hapi, the caller of a prepared authenticated answer. */
export interface KnownCallers {
  /** The principal when its token is known in memory and the route lets it in; no side effect. */
  identify(authorization: string | undefined, config: GantryRouteConfig): Principal | undefined;
  /** Counts the request: the decision (null: the route counts nothing), undefined when hapi's path must. */
  count(routeId: string, config: GantryRouteConfig, principal: Principal): RateDecision | null | undefined;
}

type Entry =
  | { kind: 'anonymous'; routeId: string; answer: PreparedAnswer }
  | { kind: 'caller'; routeId: string; answer: CallerAnswer };

// By listener: a plugin's server object is its own view of the one server, the listener is shared.
const answersByListener = new WeakMap<Server['listener'], Map<string, Entry>>();

function register(server: Server, path: string, entry: Entry): void {
  const prefix = (server.realm.modifiers.route.prefix as string | undefined) ?? '';
  let answers = answersByListener.get(server.listener);
  if (!answers) answersByListener.set(server.listener, (answers = new Map()));
  answers.set(prefix + path, entry);
}

/**
 * Registers a prepared answer for GETs of exactly `path` (under the registering plugin's prefix,
 * no query string). The route at that path stays the authority: it answers HEAD, every other
 * form of the URL, inject() and anything the answer leaves to it.
 */
export function servePrepared(server: Server, path: string, routeId: string, answer: PreparedAnswer): void {
  register(server, path, { kind: 'anonymous', routeId, answer });
}

/**
 * The same for an authenticated GET polled by every open client: its caller known in memory,
 * its limit counted in memory, its data current in memory, it is answered with the route's
 * success envelope; any of those missing, the route answers (docs/kernel.md, Prepared answers).
 */
export function servePreparedForCaller(server: Server, path: string, routeId: string, answer: CallerAnswer): void {
  register(server, path, { kind: 'caller', routeId, answer });
}

/**
 * What a prepared authenticated answer says, when every decision is in memory: its caller, its
 * data and the limit's decision (counted); undefined to leave the request to hapi.
 */
function decideForCaller(
  entry: Extract<Entry, { kind: 'caller' }>,
  config: GantryRouteConfig,
  req: IncomingMessage,
  callers: KnownCallers,
): { principal: Principal; data: unknown; decision: RateDecision | null } | undefined {
  const principal = callers.identify(req.headers.authorization, config);
  if (principal === undefined) return undefined;
  const data = entry.answer(principal);
  if (data === undefined) return undefined;
  // Counted last: a request left to hapi is counted there, once.
  const decision = callers.count(entry.routeId, config, principal);
  return decision === undefined ? undefined : { principal, data, decision };
}

/** The route's success answer to a caller decided in memory: its envelope and headers. */
function callerResponse(
  known: NonNullable<ReturnType<typeof decideForCaller>>,
  requestId: string,
  receivedMs: number,
): PreparedResponse {
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (known.decision) writeAllowedRateLimitHeaders(headers, known.decision);
  const body = Buffer.from(JSON.stringify(successEnvelope(requestId, receivedMs, known.data)));
  return { statusCode: 200, headers, body };
}

/**
 * Puts the prepared answers in front of hapi's request handler: a GET of a registered path is
 * written from memory without a hapi request (no routing, lifecycle or marshalling, which cost
 * more than the answer), with the headers every hapi response carries (request id, security
 * headers) and recorded as hapi's would be. An authenticated answer decides its caller with
 * the functions hapi's path uses (`callers`); without them, only anonymous answers are served.
 */
export function installPreparedAnswers(
  server: Server,
  record: ((answered: AnsweredRequest) => void) | null,
  callers: KnownCallers | null,
): void {
  const answers = answersByListener.get(server.listener);
  if (!answers || answers.size === 0) return;
  const configs = new Map<Entry, GantryRouteConfig>();
  for (const entry of answers.values()) {
    const settings = server.lookup(entry.routeId)?.settings;
    if (!settings) throw new Error(`prepared answer for unknown route ${entry.routeId}`);
    configs.set(entry, ((settings.plugins as { gantry?: GantryRouteConfig }).gantry ?? {}) as GantryRouteConfig);
  }
  const listener = server.listener;
  const [dispatch] = listener.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  listener.removeListener('request', dispatch);
  listener.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry = req.method === 'GET' ? answers.get(req.url ?? '') : undefined;
    if (entry === undefined) return dispatch(req, res);
    const receivedMs = Date.now();
    let prepared: PreparedResponse | undefined;
    let known: ReturnType<typeof decideForCaller>;
    if (entry.kind === 'anonymous') prepared = entry.answer(req.headers);
    else if (callers !== null) known = decideForCaller(entry, configs.get(entry)!, req, callers);
    if (prepared === undefined && known === undefined) return dispatch(req, res);
    const requestId = inboundRequestId(req.headers['x-request-id']);
    const answer = known === undefined ? prepared! : callerResponse(known, requestId, receivedMs);
    res.statusCode = answer.statusCode;
    for (const name in answer.headers) res.setHeader(name, answer.headers[name]);
    res.setHeader('x-request-id', requestId);
    for (const name in SECURITY_HEADERS) res.setHeader(name, SECURITY_HEADERS[name as keyof typeof SECURITY_HEADERS]);
    if (answer.body !== null) res.setHeader('content-length', answer.body.length);
    res.end(answer.body ?? undefined);
    record?.({
      requestId,
      routeId: entry.routeId,
      method: 'GET',
      path: req.url!,
      status: answer.statusCode,
      receivedMs,
      peer: req.socket.remoteAddress ?? 'unknown',
      forwardedFor: req.headers['x-forwarded-for'],
      headers: req.headers,
      userId: known?.principal.userId,
    });
  });
}
