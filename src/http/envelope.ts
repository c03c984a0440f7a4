import type { Request, ResponseToolkit, ResponseObject } from '@hapi/hapi';

export interface Meta {
  requestId: string;
  durationMs: number;
  [key: string]: unknown;
}

export interface Envelope<T> {
  data: T;
  meta: Meta;
  error: null;
}

export function requestIdOf(request: Request): string {
  return (request.app as { requestId?: string }).requestId ?? request.info.id;
}

export function durationOf(request: Request): number {
  return Math.round((Date.now() - request.info.received) * 100) / 100;
}

/** The success envelope of the spec: data, meta (requestId, durationMs, list fields), error null. */
export function envelope<T>(request: Request, data: T, meta?: Record<string, unknown>): Envelope<T> {
  return { data, meta: { requestId: requestIdOf(request), durationMs: durationOf(request), ...meta }, error: null };
}

/** Replies with the envelope and a status (200 unless told). */
export function reply<T>(request: Request, h: ResponseToolkit, data: T, options: { status?: number; meta?: Record<string, unknown> } = {}): ResponseObject {
  return h.response(envelope(request, data, options.meta)).code(options.status ?? 200);
}
