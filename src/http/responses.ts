import type { Request, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';
import type { Boom } from '@hapi/boom';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { DomainError, type ErrorCode } from './errors.js';
import { durationOf, requestIdOf } from './envelope.js';
import { clientAddressFrom, clientAddressOf, trustedProxyTest } from './client-address.js';
import type { TrustedProxy } from '../config.js';
import type { AnsweredRequest } from './prepared.js';
import type { RequestCounter } from './metrics.js';
import { rateLimitHeaders, type RateDecision, writeAllowedRateLimitHeaders } from './rate-limit.js';
import { routeConfig, routeName } from './route-config.js';
import { joiDetails } from './validation.js';
import { isUniqueViolation } from '../db/engine.js';
import { MissingCredentialKeyError } from '../lib/sealed.js';
import { missingKeyMessage, type MissingKeyReport } from '../lib/missing-key.js';
import type { PageKit } from './page-kit.js';
import { machinePath, prefersHtml } from './negotiation.js';
import { htmlErrorFormat } from './pages.js';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMIT_EXCEEDED',
};

interface MappedError {
  status: number;
  code: ErrorCode;
  message: string;
  details?: unknown;
  headers: Record<string, string>;
}

function mapError(err: Boom | DomainError): MappedError {
  if (err instanceof DomainError)
    return { status: err.status, code: err.code, message: err.message, details: err.details, headers: err.headers };
  // A node a rotation elsewhere did not reach: the operator's to fix, not a failure of the code.
  if (err instanceof MissingCredentialKeyError)
    return { status: 503, code: 'NOT_CONFIGURED', message: missingKeyMessage(err.keyId), headers: {} };
  // A uniqueness race the service's own check could not see (two inserts at once) is a
  // conflict, not a failure of the server.
  if (isUniqueViolation(err)) {
    return {
      status: 409,
      code: 'CONFLICT',
      message: 'The change conflicts with existing data; reload and try again',
      headers: {},
    };
  }
  const status = err.output.statusCode;
  const headers = { ...(err.output.headers as Record<string, string>) };
  if (status >= 500) return { status: 500, code: 'INTERNAL', message: 'Internal server error', headers: {} };
  const code = CODE_BY_STATUS[status] ?? (status === 402 ? 'INSUFFICIENT_FUNDS' : 'VALIDATION_FAILED');
  const message =
    status === 404 && err.message === 'Not Found'
      ? 'No such endpoint'
      : String(err.output.payload.message ?? err.message);
  return { status, code, message, headers };
}

/**
 * A browser's request (it prefers HTML) for a path no route has, outside the machine paths: it
 * gets a page saying so, not the JSON envelope (docs/kernel.md, Pages: unknown paths).
 */
const browserMissedPage = (request: Request, mapped: MappedError) =>
  mapped.status === 404 &&
  (request.route.method as string) === '_special' &&
  !machinePath(request.path) &&
  prefersHtml(request);

/**
 * The kernel's request lifecycle: a request id for everything, one mapping of every error
 * (DomainError, Boom, joi via the global failAction, unexpected exceptions) into the
 * envelope, rate-limit headers, and one JSON log line per request (path only: query strings
 * can carry secrets).
 */
export function registerResponses(
  server: Server,
  logger: Logger,
  clock: Clock,
  pages: PageKit,
  reportMissingKey: MissingKeyReport,
  /** Where the error pages lead back to: the listener's home page. */
  homePath = '/',
): void {
  server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
    const response = request.response;
    const requestId = requestIdOf(request);
    const decision = (request.app as { rateLimit?: RateDecision }).rateLimit;

    if (response instanceof DomainError || (response as Boom).isBoom) {
      const err = response as Boom | DomainError;
      const mapped = mapError(err);
      if (err instanceof MissingCredentialKeyError) reportMissingKey(err.keyId);
      else if (mapped.status >= 500) {
        logger.error('request failed', {
          requestId,
          route: routeName(request),
          method: request.method,
          path: request.path,
          ip: clientAddressOf(request),
          err: err as Error,
        });
      } else if (mapped.status === 409 && !(err instanceof DomainError)) {
        logger.warn('constraint conflict', { requestId, route: routeName(request), reason: (err as Error).message });
      }
      // The envelope, unless the route writes its errors in another wire format, or a browser
      // asked for a page that does not exist (docs/kernel.md, Pages: unknown paths).
      const format = routeConfig(request).errorFormat ?? (browserMissedPage(request, mapped) ? htmlErrorFormat : null);
      const limitHeaders = decision ? rateLimitHeaders(decision, clock.now().getTime()) : {};
      const retryAfter = Number(mapped.headers['Retry-After'] ?? limitHeaders['Retry-After']);
      const formatted = format?.(
        {
          status: mapped.status,
          code: mapped.code,
          message: mapped.message,
          details: mapped.details,
          requestId,
          retryAfterSec: Number.isFinite(retryAfter) ? retryAfter : undefined,
          homePath,
        },
        pages,
      );
      const body = formatted?.body ?? {
        data: null,
        error: {
          code: mapped.code,
          message: mapped.message,
          ...(mapped.details !== undefined ? { details: mapped.details } : {}),
        },
        meta: { requestId, durationMs: durationOf(request) },
      };
      const res = h.response(body).code(mapped.status);
      if (formatted?.type) res.type(formatted.type);
      for (const [name, value] of Object.entries({ ...limitHeaders, ...mapped.headers, ...formatted?.headers }))
        res.header(name, value);
      res.header('X-Request-Id', requestId);
      return res;
    }

    // Plain, known-valid names and values: written straight into the headers object, which
    // is what response.header() ends up doing after work these do not need (hot path).
    const headers = (response as ResponseObject).headers as Record<string, string>;
    headers['x-request-id'] = requestId;
    if (decision) writeAllowedRateLimitHeaders(headers, decision);
    return h.continue;
  });

  // One line per request at info level; below it, not even the listener (hot path).
  if (logger.enabled?.('info') === false) return;
  server.events.on('response', (request) => {
    const status = (request.response as { statusCode?: number } | null)?.statusCode;
    logger.info('request', {
      requestId: requestIdOf(request),
      method: request.method.toUpperCase(),
      path: request.path,
      route: request.route.settings.id,
      status,
      durationMs: durationOf(request),
      ip: clientAddressOf(request),
      userId: (request.auth.credentials as { userId?: string } | null)?.userId,
    });
  });
}

/**
 * The global failAction: joi failures become 400 VALIDATION_FAILED with every failing field
 * in details; a malformed path parameter (an id) is 422 unless the route says otherwise.
 */
export function validationFailAction(request: Request, _h: ResponseToolkit, err?: Error): never {
  const joiErr = err as
    | (Error & {
        details?: Array<{ path: (string | number)[]; message: string; type: string }>;
        output?: { payload?: { validation?: { source?: string } } };
      })
    | undefined;
  const source = joiErr?.output?.payload?.validation?.source ?? 'payload';
  const details = joiDetails(joiErr?.details);
  const status = source === 'params' ? (routeConfig(request).invalidParamsStatus ?? 422) : 400;
  const what =
    source === 'payload' ? 'request body' : source === 'params' ? 'path' : source === 'query' ? 'query string' : source;
  const message =
    details.length > 0 ? `Invalid ${what}: ${details.map((d) => d.message).join('; ')}` : `Invalid ${what}`;
  throw DomainError.withStatus(status, 'VALIDATION_FAILED', message, details);
}

/**
 * Records an answer sent without a hapi request (a prepared answer, src/http/prepared.ts) as
 * the kernel records every other one: the request log line at info, the request metrics when
 * scraped. null when there is nothing to record.
 */
export function preparedAnswerRecorder(
  logger: Logger,
  count: RequestCounter | null,
  proxies: readonly TrustedProxy[],
): ((answered: AnsweredRequest) => void) | null {
  const log = logger.enabled?.('info') !== false;
  if (!log && count === null) return null;
  const trusted = proxies.length > 0 ? trustedProxyTest(proxies) : () => false;
  return (a) => {
    const elapsedMs = Date.now() - a.receivedMs;
    count?.(a.routeId, a.method, a.status, elapsedMs / 1000);
    if (!log) return;
    logger.info('request', {
      requestId: a.requestId,
      method: a.method,
      path: a.path,
      route: a.routeId,
      status: a.status,
      durationMs: elapsedMs,
      ip: clientAddressFrom(a.peer, a.forwardedFor, trusted),
      userId: a.userId,
    });
  };
}
