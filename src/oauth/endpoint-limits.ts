import type { Kernel } from '../kernel.js';
import { DEFAULT_RATE_LIMIT, rateLimitHeaders, type RateDecision } from '../http/rate-limit.js';
import type { RateLimitRule } from '../http/route-config.js';
import { isUuid } from '../lib/ids.js';
import { OAuthError } from './errors.js';
import type { StoredWindow } from '../db/store/rate-limit-windows.js';

export type OAuthEndpoint = 'oauth.token' | 'oauth.revoke';

/** The token and revoke endpoints have no row of their own in the Limits table (docs/interface.md, Limits): the default. */
const TOKEN_ENDPOINT_LIMIT: RateLimitRule = { ...DEFAULT_RATE_LIMIT, acrossNodes: true };

/** Failed client authentication, at token and revoke together: per client address and per client_id. */
const CLIENT_AUTH_FAILURE_LIMIT: RateLimitRule = { limit: 20, windowSec: 60, acrossNodes: true };

/**
 * The caller as the route sees it. The service records the decision that applies to the
 * request in `rateLimit`, which the kernel turns into the X-RateLimit headers.
 */
export interface EndpointCaller {
  address: string;
  rateLimit?: RateDecision;
}

/**
 * Who the token and revoke endpoints count (docs/oauth.md, Rate limits). They are anonymous to
 * the kernel, and a partner backend refreshing for many users from one address must not share
 * one per-address budget, so they count here instead, once the subject is known:
 * - a request for a grant of the client: `<endpoint>|client:<id>|user:<sub>`, the table's
 *   "per authenticated user, per endpoint" (the client is the authenticated party, the user
 *   the one it acts for);
 * - a request of an authenticated client that names no grant of it (unknown, spent or another
 *   client's token, a malformed request): `<endpoint>|client:<id>|ip:<address>`, checked before
 *   the grant is looked up;
 * - failed client authentication: `oauth.client-auth|ip:<address>`, and
 *   `oauth.client-auth|client:<client_id>` when the id is a confidential client's; 20 per 60 s
 *   each, shared by both endpoints, so guessing a secret is bounded from one address and across
 *   addresses. The address's bucket is checked before the secret is (PostgreSQL's refresh
 *   batches compare the secret first, then answer right and wrong alike: service.ts). The
 *   client_id's is not: a client_id is public (it is in every authorize URL), so a spent
 *   client_id bucket only turns a failed authentication's 401 into a 429, and the holder of the
 *   secret is never locked out.
 * All are exact across the nodes of a cluster (docs/postgres.md, Rate limits); on SQLite they are
 * plain in-memory hits of the kernel's limiter (the refresh grant's hot path stays cheap).
 */
export function createEndpointLimits(kernel: Pick<Kernel, 'limiter' | 'clock'>) {
  const { limiter, clock } = kernel;

  function refusal(caller: EndpointCaller, decision: RateDecision): OAuthError {
    caller.rateLimit = decision;
    const { 'Retry-After': retryAfter } = rateLimitHeaders(decision, clock.now().getTime());
    return new OAuthError('invalid_request', 'Too many requests; retry after the time in Retry-After', 429, {
      'Retry-After': retryAfter as string,
    });
  }

  const addressBucket = (caller: EndpointCaller) => `oauth.client-auth|ip:${caller.address}`;
  const grantFailureBucket = (endpoint: OAuthEndpoint, clientId: string, caller: EndpointCaller) =>
    `${endpoint}|client:${clientId}|ip:${caller.address}`;
  const userBucket = (endpoint: OAuthEndpoint, clientId: string, userId: string) =>
    `${endpoint}|client:${clientId}|user:${userId}`;

  function settle(caller: EndpointCaller, decision: RateDecision): OAuthError | null {
    if (!decision.allowed) return refusal(caller, decision);
    caller.rateLimit = decision;
    return null;
  }

  function failureBuckets(caller: EndpointCaller, claimedClientId: string | null): string[] {
    const buckets = [addressBucket(caller)];
    // Only a well-formed id can name a client; anything else is counted by address alone.
    if (claimedClientId !== null && isUuid(claimedClientId))
      buckets.push(`oauth.client-auth|client:${claimedClientId}`);
    return buckets;
  }

  return {
    /** Whether the endpoint's limits count in the shared table (PostgreSQL), so `inStatement` applies. */
    countsInStatements: limiter.countsShared(TOKEN_ENDPOINT_LIMIT),

    /**
     * Before the secret is looked at: throws the 429 when this address has used up its failed
     * authentications. Reads, in the same query, the claimed client's failed requests from this
     * address, and returns the check `beforeGrant` makes once the client is authenticated.
     */
    async beforeClientAuth(
      endpoint: OAuthEndpoint,
      caller: EndpointCaller,
      claimedClientId: string | null,
    ): Promise<(clientId: string) => Promise<void>> {
      const reads = [{ bucket: addressBucket(caller), rule: CLIENT_AUTH_FAILURE_LIMIT }];
      if (claimedClientId !== null)
        reads.push({ bucket: grantFailureBucket(endpoint, claimedClientId, caller), rule: TOKEN_ENDPOINT_LIMIT });
      const [address, claimed] = await limiter.readAll(reads);
      if (!address.allowed) throw refusal(caller, address);
      return async (clientId) => {
        const decision =
          claimed && clientId === claimedClientId
            ? claimed
            : await limiter.read(grantFailureBucket(endpoint, clientId, caller), TOKEN_ENDPOINT_LIMIT);
        if (!decision.allowed) throw refusal(caller, decision);
      };
    },

    /**
     * Counts a failure against the address, and against the client_id when it names a
     * confidential client: only a secret can be guessed, and a public client's id, which anyone
     * may send, must not let anyone stop that client's users. Returns the 429 to answer instead
     * of the failure when a bucket was already spent (the client_id's, or the address's by a
     * concurrent request), else null.
     */
    async clientAuthFailed(caller: EndpointCaller, confidentialClientId: string | null): Promise<OAuthError | null> {
      let refused: RateDecision | null = null;
      for (const bucket of failureBuckets(caller, confidentialClientId)) {
        const decision = await limiter.charge(bucket, CLIENT_AUTH_FAILURE_LIMIT);
        if (!decision.allowed) refused ??= decision;
        if (!caller.rateLimit || decision.remaining < caller.rateLimit.remaining) caller.rateLimit = decision;
      }
      return refused && refusal(caller, refused);
    },

    async grantFailed(endpoint: OAuthEndpoint, caller: EndpointCaller, clientId: string): Promise<void> {
      caller.rateLimit = await limiter.charge(grantFailureBucket(endpoint, clientId, caller), TOKEN_ENDPOINT_LIMIT);
    },

    /** Counts a request for one user of the client; the 429 to answer when over the limit, else null. */
    async charge(endpoint: OAuthEndpoint, caller: EndpointCaller, clientId: string, userId: string) {
      return settle(caller, await limiter.charge(userBucket(endpoint, clientId, userId), TOKEN_ENDPOINT_LIMIT));
    },

    /**
     * The failure budgets' reads and `charge`, as one statement of the refresh grant counts them
     * in the shared table (PostgreSQL, `countsInStatements`): the values it binds, and the
     * decisions on what it read and counted.
     */
    inStatement(endpoint: OAuthEndpoint, caller: EndpointCaller, clientId: string): StatementCharge {
      const nowMs = clock.now().getTime();
      return {
        values: {
          addressBucket: addressBucket(caller),
          addressLimit: limiter.effectiveLimit(CLIENT_AUTH_FAILURE_LIMIT),
          failuresBucket: grantFailureBucket(endpoint, clientId, caller),
          failuresLimit: limiter.effectiveLimit(TOKEN_ENDPOINT_LIMIT),
          meterBucketPrefix: userBucket(endpoint, clientId, ''),
          meterLimit: limiter.effectiveLimit(TOKEN_ENDPOINT_LIMIT),
          meterWindowMs: TOKEN_ENDPOINT_LIMIT.windowSec * 1000,
        },
        // The order of beforeClientAuth and its check before the grant: the address, then the client's.
        refuseSpent(addressWindow, failuresWindow) {
          for (const [stored, rule] of [
            [addressWindow, CLIENT_AUTH_FAILURE_LIMIT],
            [failuresWindow, TOKEN_ENDPOINT_LIMIT],
          ] as const) {
            const decision = limiter.unspent(rule, stored, nowMs);
            if (!decision.allowed) return refusal(caller, decision);
          }
          return null;
        },
        settle: (stored) => settle(caller, limiter.decide(TOKEN_ENDPOINT_LIMIT, stored)),
      };
    },

    /** `charge` counted in this process only: the SQLite hot path, one process, cannot await. */
    chargeInProcess(endpoint: OAuthEndpoint, caller: EndpointCaller, clientId: string, userId: string) {
      return settle(caller, limiter.hit(userBucket(endpoint, clientId, userId), TOKEN_ENDPOINT_LIMIT));
    },
  };
}

/**
 * The endpoint's limits as the refresh grant's statement counts them (store.rotateRefreshTokensStatement):
 * `values` are the limits' part of what it binds. `refuseSpent` takes the failure budgets it read
 * and answers the 429 when one is spent (then it counted nothing), else null; `settle` takes the
 * meter's count it got back and answers null to go on, or the 429.
 */
export interface StatementCharge {
  values: {
    addressBucket: string;
    addressLimit: number;
    failuresBucket: string;
    failuresLimit: number;
    meterBucketPrefix: string;
    meterLimit: number;
    meterWindowMs: number;
  };
  refuseSpent(address: StoredWindow | null, failures: StoredWindow | null): OAuthError | null;
  settle(stored: StoredWindow): OAuthError | null;
}

/**
 * What a grant calls once it knows the user the request is for, before it changes anything:
 * null to go on, or the 429 to answer.
 */
export interface GrantMeter {
  (userId: string): Promise<OAuthError | null>;
  /** The same charge counted in this process only, for the SQLite hot path (one process, no await). */
  inProcess(userId: string): OAuthError | null;
}
