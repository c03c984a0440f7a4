/**
 * Every error code an envelope can carry, with what it means. Domains throw DomainError
 * with one of these; http/envelope.ts turns it (and Boom, and joi) into the envelope.
 */
export const ErrorCodes = {
  /** 400: a body or query failed validation; 422: a malformed id in the path. */
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  /** 401: no bearer token, or one that is malformed, expired or revoked. */
  UNAUTHORIZED: 'UNAUTHORIZED',
  /** 401: sign-in with a wrong email/password pair (same answer whether the email exists). */
  INVALID_CREDENTIALS: 'INVALID_CREDENTIALS',
  /** 403: authenticated, but not allowed (not a member, missing role, another user's item). */
  FORBIDDEN: 'FORBIDDEN',
  /** 403: a third-party OAuth token whose scopes do not cover this endpoint. */
  INSUFFICIENT_SCOPE: 'INSUFFICIENT_SCOPE',
  /** 403: the account is suspended; its workspaces refuse writes, reads still work. */
  ACCOUNT_SUSPENDED: 'ACCOUNT_SUSPENDED',
  /** 403: the account lacks the AI entitlement. */
  AI_NOT_ENTITLED: 'AI_NOT_ENTITLED',
  /** 402: the wallet cannot pay for the operation. */
  INSUFFICIENT_FUNDS: 'INSUFFICIENT_FUNDS',
  /** 404: no such resource, or none the caller may know of. */
  NOT_FOUND: 'NOT_FOUND',
  /** 405: the path exists, the method does not. */
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  /** 409: the change conflicts with existing state (duplicate slug, email taken...). */
  CONFLICT: 'CONFLICT',
  /** 410: a one-time secret that was already used or has expired. */
  GONE: 'GONE',
  /** 413: the request body is larger than the route accepts. */
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  /** 415: a body in a content type the route does not accept. */
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  /** 429: a rate limit was exceeded; Retry-After says when to come back. */
  RATE_LIMIT_EXCEEDED: 'RATE_LIMIT_EXCEEDED',
  /** 502: an upstream service (provider, MCP server) answered badly. */
  UPSTREAM_FAILED: 'UPSTREAM_FAILED',
  /** 503: a feature needs configuration the operator has not provided. */
  NOT_CONFIGURED: 'NOT_CONFIGURED',
  /** 503: no AI provider is configured. */
  NO_PROVIDER_CONFIGURED: 'NO_PROVIDER_CONFIGURED',
  /** 500: an unexpected failure; the message never carries internals. */
  INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** An error a service throws on purpose: a stable code, an HTTP status and a safe message. */
export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const badRequest = (message: string, details?: unknown) => new DomainError(400, 'VALIDATION_FAILED', message, details);
export const unauthorized = (message = 'Authentication required') =>
  new DomainError(401, 'UNAUTHORIZED', message, undefined, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (message = 'You are not allowed to do this') => new DomainError(403, 'FORBIDDEN', message);
export const notFound = (what = 'Resource') => new DomainError(404, 'NOT_FOUND', `${what} not found`);
export const conflict = (message: string) => new DomainError(409, 'CONFLICT', message);
