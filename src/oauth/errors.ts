import type { RouteErrorFormat } from '../http/route-config.js';
/**
 * RFC 6749 error bodies for the token and revoke endpoints (5.2, RFC 7009 2.2.1), and the
 * authorization errors the authorize endpoint sends back by redirect (4.1.2.1). These
 * endpoints answer `{error, error_description}` instead of the envelope (STYLE.md rule 6).
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  /** RFC 8707 2: the `resource` is unknown, malformed, or not the one of the grant. */
  | 'invalid_target'
  | 'server_error';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/**
 * The kernel's errors on the token and revoke endpoints (429, 413, 415, an unreadable body) in
 * RFC 6749 5.2 form: clients parse `error`, never the envelope.
 */
export const oauthErrorFormat: RouteErrorFormat = (e) => ({
  body: { error: e.status >= 500 ? 'server_error' : 'invalid_request', error_description: e.message },
  headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
});

export const invalidRequest = (description: string) => new OAuthError('invalid_request', description);
export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);
export const invalidScope = (description: string) => new OAuthError('invalid_scope', description);
export const invalidTarget = (description: string) => new OAuthError('invalid_target', description);

/** 401; with `WWW-Authenticate: Basic` when the client tried HTTP Basic (RFC 6749 5.2). */
export const invalidClient = (usedBasic: boolean, description = 'Client authentication failed') =>
  new OAuthError(
    'invalid_client',
    description,
    401,
    usedBasic ? { 'WWW-Authenticate': 'Basic realm="gantry", charset="UTF-8"' } : {},
  );
