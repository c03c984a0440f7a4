/**
 * The error catalog: every code an envelope can carry, with its one HTTP status and what it
 * means. Domains throw DomainError with one of these codes and the status follows from the
 * code, so a code never goes out with two statuses (except the two listed in
 * StatusExceptions; docs/kernel.md). http/responses.ts turns it (and Boom, and joi) into the
 * envelope.
 */
export const ErrorCodes = {
  /** 400: a body or query failed validation (a malformed id in the path: see StatusExceptions). */
  VALIDATION_FAILED: 400,
  /** 401: no bearer token, or one that is malformed, expired or revoked. */
  UNAUTHORIZED: 401,
  /** 401: sign-in with a wrong email/password pair (same answer whether the email exists). */
  INVALID_CREDENTIALS: 401,
  /** 403: authenticated, but not allowed (not a member, missing role, another user's item). */
  FORBIDDEN: 403,
  /** 401: the password (or sign-in link) was right and two-step sign-in is on: details.mfaToken, details.methods. */
  MFA_REQUIRED: 401,
  /** 403: the act needs a session that proved a second factor within the last 5 minutes (docs/identity.md, Step-up). */
  STEP_UP_REQUIRED: 403,
  /** 403: the account requires its approvers to have a second factor, and the caller has none. */
  SECOND_FACTOR_REQUIRED: 403,
  /** 403: a third-party OAuth token whose scopes do not cover this endpoint. */
  INSUFFICIENT_SCOPE: 403,
  /** 403: the account is suspended; its workspaces refuse writes, reads still work. */
  ACCOUNT_SUSPENDED: 403,
  /** 403: the account lacks the AI entitlement. */
  AI_NOT_ENTITLED: 403,
  /** 402: the wallet cannot pay for the operation. */
  INSUFFICIENT_FUNDS: 402,
  /** 404: no such resource, or none the caller may know of. */
  NOT_FOUND: 404,
  /** 405: the path exists, the method does not. */
  METHOD_NOT_ALLOWED: 405,
  /** 409: the change conflicts with existing state (duplicate slug, email taken...). */
  CONFLICT: 409,
  /** 410: a one-time secret that was already used or has expired. */
  GONE: 410,
  /** 413: the request body is larger than the route accepts. */
  PAYLOAD_TOO_LARGE: 413,
  /** 415: a body in a content type the route does not accept. */
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** 429: a rate limit was exceeded; Retry-After says when to come back. */
  RATE_LIMIT_EXCEEDED: 429,
  /** 502: an upstream service (provider, MCP server) answered badly (none reachable: see StatusExceptions). */
  UPSTREAM_FAILED: 502,
  /** 503: a feature needs configuration the operator has not provided, or the server is draining. */
  NOT_CONFIGURED: 503,
  /** 503: no AI provider is configured. */
  NO_PROVIDER_CONFIGURED: 503,
  /** 500: an unexpected failure; the message never carries internals. */
  INTERNAL: 500,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ErrorCodes;

/**
 * The only codes that may go out with another status than their catalog one, and which. Both
 * are the interface's answers and kept for clients that read the code: thrown with
 * DomainError.withStatus, each from a single place.
 */
interface StatusExceptions {
  /** 422 (or 400/404, the route's `invalidParamsStatus`): a malformed path parameter; the kernel's failAction only. */
  VALIDATION_FAILED: 400 | 404 | 422;
  /** 503 with Retry-After: every provider's circuit is open (a retryable outage, not a bad answer); AI runs only. */
  UPSTREAM_FAILED: 503;
}

/** An error a service throws on purpose: a stable code, its HTTP status and a safe message. */
export class DomainError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = ErrorCodes[code];
  }

  /** One of the StatusExceptions: the code with its allowed second status. */
  static withStatus<C extends keyof StatusExceptions>(
    status: StatusExceptions[C],
    code: C,
    message: string,
    details?: unknown,
    headers?: Record<string, string>,
  ): DomainError {
    const err = new DomainError(code, message, details, headers);
    (err as { status: number }).status = status;
    return err;
  }
}

export const badRequest = (message: string, details?: unknown) =>
  new DomainError('VALIDATION_FAILED', message, details);
export const unauthorized = (message = 'Authentication required') =>
  new DomainError('UNAUTHORIZED', message, undefined, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (message = 'You are not allowed to do this') => new DomainError('FORBIDDEN', message);
export const notFound = (what = 'Resource') => new DomainError('NOT_FOUND', `${what} not found`);
export const conflict = (message: string) => new DomainError('CONFLICT', message);
