import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import { DomainError, unauthorized } from './errors.js';
import { routeConfig, type GantryRouteConfig } from './route-config.js';

/** Who is calling, whatever the credential. */
export interface Principal {
  userId: string;
  /** session: first-party sign-in; oauth: a third-party client's access token; api_key: enterprise key. */
  kind: 'session' | 'oauth' | 'api_key';
  /** Granted OAuth scopes; null for first-party credentials, which reach every JWT endpoint. */
  scopes: readonly string[] | null;
  clientId: string | null;
  sessionId: string | null;
  /** The account an API key belongs to (it acts there with its owner's role). */
  accountId: string | null;
  /** Token or key id (jti for access tokens), for revocation and logs. */
  tokenId: string | null;
}

/**
 * A signed-in user acting outside a bearer-authenticated request (a consent page, a link they
 * follow back): what a first-party session of theirs would be.
 */
export const userPrincipal = (userId: string): Principal => ({
  userId,
  kind: 'session',
  scopes: null,
  clientId: null,
  sessionId: null,
  accountId: null,
  tokenId: null,
});

/**
 * Tells whether a bearer token is one of its kind: undefined when it is not (the next
 * verifier is asked), null when it is but is invalid, expired or revoked, or the principal.
 */
export interface BearerVerifier {
  name: string;
  /** May answer synchronously (a cache hit) to spare the hot path a promise. */
  verify(token: string): Principal | null | undefined | Promise<Principal | null | undefined>;
  /**
   * The principal when the verifier holds a live answer for the token in memory, with no
   * work and no side effect; undefined for anything else (then only `verify` decides).
   */
  cached?(token: string): Principal | undefined;
}

export function principalOf(request: Request): Principal {
  const credentials = request.auth.credentials as unknown as Principal | undefined;
  if (!credentials) throw unauthorized();
  return credentials;
}

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 2.1: b64token), or null
 * when the header is absent or of another form. Every caller gives its own answer to null.
 */
export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header ?? '');
  return match ? match[1] : null;
}

/**
 * Counts an authenticated request where no later lifecycle step does (src/http/post-auth.ts):
 * undefined when nothing is counted here, a promise when the count is in the database.
 */
export type SchemeCount = (request: Request, principal: Principal) => Promise<void> | undefined;

type AuthAnswer = ReturnType<ResponseToolkit['authenticated']>;

/**
 * The `bearer` strategy, default for every route: session JWTs, OAuth access tokens and API
 * keys, each checked by the verifier of the domain that issued it. Scope and key rules per
 * route are checked right after, from the route's `plugins.gantry`; then, given `count`, the
 * rate limit of a route that has no step of its own for it (an authenticated GET).
 */
export function registerBearerAuth(server: Server, verifiers: readonly BearerVerifier[], count?: SchemeCount): void {
  server.auth.scheme('gantry-bearer', () => ({
    authenticate(request: Request, h: ResponseToolkit) {
      const header = request.headers.authorization as string | undefined;
      if (!header) throw Object.assign(unauthorized('Missing bearer token'), { isMissing: true });
      const token = bearerToken(header);
      if (token === null) throw unauthorized('Malformed Authorization header; expected "Bearer <token>"');
      return verifyWith(verifiers, 0, token, request, h, count);
    },
  }));
  server.auth.strategy('bearer', 'gantry-bearer');
  server.auth.default('bearer');
}

/**
 * Asks the verifiers from `from` on; synchronous while they answer synchronously (a cached
 * token costs no promise), a promise from the first one that does not.
 */
function verifyWith(
  verifiers: readonly BearerVerifier[],
  from: number,
  token: string,
  request: Request,
  h: ResponseToolkit,
  count: SchemeCount | undefined,
): AuthAnswer | Promise<AuthAnswer> {
  for (let i = from; i < verifiers.length; i++) {
    const answer = verifiers[i].verify(token);
    if (answer instanceof Promise) {
      return answer.then((principal) =>
        principal === undefined
          ? verifyWith(verifiers, i + 1, token, request, h, count)
          : accept(principal, request, h, count),
      );
    }
    if (answer !== undefined) return accept(answer, request, h, count);
  }
  throw invalidToken();
}

/**
 * A verifier's answer: the principal, if it may call this route; null is an invalid token.
 * A refusal past the rate limit keeps the caller as the request's credentials (the log line
 * names them, as it does for every other answer to a known caller).
 */
function accept(
  principal: Principal | null,
  request: Request,
  h: ResponseToolkit,
  count: SchemeCount | undefined,
): AuthAnswer | Promise<AuthAnswer> {
  if (principal === null) throw invalidToken();
  const refusal = routeAccessRefusal(routeConfig(request), principal);
  if (refusal) throw refusal;
  const credentials = principal as unknown as Record<string, unknown>;
  let counted: Promise<void> | undefined;
  try {
    counted = count?.(request, principal);
  } catch (err) {
    return h.unauthenticated(err as Error, { credentials }) as unknown as AuthAnswer;
  }
  if (counted === undefined) return h.authenticated({ credentials });
  return counted.then(
    () => h.authenticated({ credentials }),
    (err: Error) => h.unauthenticated(err, { credentials }) as unknown as AuthAnswer,
  );
}

const invalidToken = () =>
  new DomainError('UNAUTHORIZED', 'Invalid, expired or revoked token', undefined, {
    'WWW-Authenticate': 'Bearer error="invalid_token"',
  });

/**
 * The route's rules for the credential kind: third-party OAuth tokens need the route's scope,
 * API keys need a route that accepts them; first-party sessions pass. Checked inside the
 * scheme (not in a separate lifecycle step: this is every authenticated request's hot path)
 * and before a prepared answer (src/http/prepared.ts). The error, or null when it may call.
 */
function routeAccessRefusal(config: GantryRouteConfig, principal: Principal): DomainError | null {
  if (principal.kind === 'session') return null;
  if (principal.kind === 'oauth') {
    if (!config.scope || !principal.scopes?.includes(config.scope)) {
      return new DomainError(
        'INSUFFICIENT_SCOPE',
        config.scope
          ? `This endpoint needs the ${config.scope} scope`
          : 'Third-party access tokens cannot call this endpoint',
        undefined,
        {
          'WWW-Authenticate': `Bearer error="insufficient_scope"${config.scope ? `, scope="${config.scope}"` : ''}`,
        },
      );
    }
  } else if (principal.kind === 'api_key' && !config.apiKeys) {
    return new DomainError('FORBIDDEN', 'API keys cannot call this endpoint');
  }
  return null;
}

/**
 * The caller of a request answered in front of hapi (src/http/prepared.ts): the principal when
 * the first verifier holds the token's live answer in memory and the route lets that caller
 * in; undefined for anything else (no token, another form, a cache miss, a refusal), which
 * hapi's path then authenticates and answers as always. No side effect.
 */
export function cachedCaller(
  verifiers: readonly BearerVerifier[],
  header: string | undefined,
  config: GantryRouteConfig,
): Principal | undefined {
  const token = header === undefined ? null : bearerToken(header);
  if (token === null) return undefined;
  const principal = verifiers[0]?.cached?.(token);
  return principal !== undefined && routeAccessRefusal(config, principal) === null ? principal : undefined;
}
