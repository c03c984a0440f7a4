import type { Request, ResponseToolkit, ResponseObject } from '@hapi/hapi';

interface Meta {
  requestId: string;
  durationMs: number;
  [key: string]: unknown;
}

interface Envelope<T> {
  data: T;
  meta: Meta;
  error: null;
}

// An inbound X-Request-Id (from a proxy) is kept when it is plainly safe to echo and log.
const INBOUND_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * The request's id: the inbound X-Request-Id when well-formed, else a UUID. Decided on first
 * use and kept on the request, so the body, the header and the log line agree (no lifecycle
 * step of its own: every request pays for those).
 */
export function requestIdOf(request: Request): string {
  const app = request.app as { requestId?: string };
  if (app.requestId === undefined)
    app.requestId = inboundRequestId(request.headers['x-request-id'] as string | undefined);
  return app.requestId;
}

/** The inbound X-Request-Id when well-formed, else a new UUID. */
export function inboundRequestId(inbound: string | string[] | undefined): string {
  return typeof inbound === 'string' && INBOUND_REQUEST_ID.test(inbound) ? inbound : crypto.randomUUID();
}

export function durationOf(request: Request): number {
  return elapsedMs(request.info.received);
}

const elapsedMs = (receivedMs: number) => Math.round((Date.now() - receivedMs) * 100) / 100;

/** The success envelope (docs/interface.md, Envelope): data, meta (requestId, durationMs, list fields), error null. */
export function successEnvelope<T>(
  requestId: string,
  receivedMs: number,
  data: T,
  meta?: Record<string, unknown>,
): Envelope<T> {
  return { data, meta: { requestId, durationMs: elapsedMs(receivedMs), ...meta }, error: null };
}

/** Replies with the envelope and a status (200 unless told). */
export function reply<T>(
  request: Request,
  h: ResponseToolkit,
  data: T,
  options: { status?: number; meta?: Record<string, unknown> } = {},
): ResponseObject {
  return h
    .response(successEnvelope(requestIdOf(request), request.info.received, data, options.meta))
    .code(options.status ?? 200);
}
