import type { Request, Server } from '@hapi/hapi';
import type { Clock } from '../lib/clock.js';
import type { Metrics } from '../lib/metrics.js';
import { DomainError } from './errors.js';
import { routeConfig, routeName, type RateLimitRule } from './route-config.js';
import type { Principal } from './auth.js';
import { clientAddressOf } from './client-address.js';
import type { RateDecision, RateLimiter } from './rate-limiter.js';

export type { RateDecision } from './rate-limiter.js';

/** The default for every endpoint (docs/interface.md, Limits) without a row of its own. */
export const DEFAULT_RATE_LIMIT: RateLimitRule = { limit: 120, windowSec: 60 };

/**
 * Writes the headers of a request the limit let through into `headers`, named as hapi writes
 * them (lower case): straight into the object, nothing allocated (every request's hot path).
 */
export function writeAllowedRateLimitHeaders(headers: Record<string, string>, decision: RateDecision): void {
  headers['x-ratelimit-limit'] = String(decision.limit);
  headers['x-ratelimit-remaining'] = String(decision.remaining);
  headers['x-ratelimit-reset'] = String(Math.ceil(decision.resetAt.getTime() / 1000));
}

/** The header values of a decision; Retry-After only on a refusal. */
export function rateLimitHeaders(decision: RateDecision, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(Math.ceil(decision.resetAt.getTime() / 1000)),
  };
  if (!decision.allowed)
    headers['Retry-After'] = String(Math.max(1, Math.ceil((decision.resetAt.getTime() - nowMs) / 1000)));
  return headers;
}

/**
 * Who a request counts as: the authenticated user, else the client address (behind a trusted
 * proxy, the one it forwarded; docs/kernel.md, Client address).
 */
function rateLimitSubject(request: Request, principal?: Principal): string {
  const caller = principal ?? (request.auth.credentials as unknown as Principal | undefined);
  return caller ? userSubject(caller) : `ip:${clientAddressOf(request)}`;
}

const userSubject = (caller: Principal) => `user:${caller.userId}`;

/**
 * The bucket of one route for one caller; another route can charge it (the same action
 * elsewhere). `principal`: the caller being authenticated, before hapi records it on the request.
 */
export const rateLimitBucket = (routeId: string, request: Request, principal?: Principal): string =>
  `${routeId}|${rateLimitSubject(request, principal)}`;

/**
 * Counts a request answered in front of hapi (src/http/prepared.ts) for an authenticated caller,
 * in the bucket and by the rule hapi's path would use: the decision when the rule counts in
 * memory and lets it through; null when the route counts nothing; undefined, having counted
 * nothing, when the rule counts in the database or refuses (hapi's path then counts it and
 * answers the 429).
 */
export function countKnownCaller(
  limiter: RateLimiter,
  routeId: string,
  rule: RateLimitRule | false | undefined,
  principal: Principal,
): RateDecision | null | undefined {
  if (rule === false) return null;
  const effective = rule ?? DEFAULT_RATE_LIMIT;
  if (limiter.countsShared(effective)) return undefined;
  // A refused hit counts nothing (RateLimiter.hit).
  const decision = limiter.hit(`${routeId}|${userSubject(principal)}`, effective);
  return decision.allowed ? decision : undefined;
}

/** Counts one request (429 past the limit); a promise only when the rule counts in the database. */
export type RateLimitCount = (request: Request, principal?: Principal) => Promise<void> | undefined;

/**
 * Per endpoint, per authenticated user (per client IP when anonymous): counts the request and
 * throws 429 past the limit. Runs after authentication so a signed-in caller is counted as
 * themself wherever they connect from.
 */
export function rateLimitCheck(limiter: RateLimiter, clock: Clock, metrics: Metrics): RateLimitCount {
  const rejections = metrics.counter('gantry_rate_limit_rejections_total', 'Requests refused with 429, by rule', [
    'rule',
  ]);
  const apply = (request: Request, rule: RateLimitRule | undefined, decision: RateDecision) => {
    const name = routeName(request);
    (request.app as { rateLimit?: RateDecision }).rateLimit = decision;
    if (!decision.allowed) {
      // The rule is the route's own row (its id), or the default one when it has none.
      rejections.inc({ rule: rule ? name : 'default' });
      throw new DomainError(
        'RATE_LIMIT_EXCEEDED',
        'Too many requests; retry after the time in Retry-After',
        undefined,
        rateLimitHeaders(decision, clock.now().getTime()),
      );
    }
  };
  // Synchronous unless the rule counts in the database: the common path stays one step.
  return (request, principal) => {
    const rule = routeConfig(request).rateLimit;
    if (rule === false) return undefined;
    const bucket = rateLimitBucket(routeName(request), request, principal);
    if (rule?.acrossNodes) return limiter.charge(bucket, rule).then((decision) => apply(request, rule, decision));
    apply(request, rule, limiter.hit(bucket, rule ?? DEFAULT_RATE_LIMIT));
    return undefined;
  };
}

/** The rate limit as a lifecycle step of its own (a server built without the kernel's others). */
export function registerRateLimits(server: Server, limiter: RateLimiter, clock: Clock, metrics: Metrics): void {
  const check = rateLimitCheck(limiter, clock, metrics);
  server.ext('onPostAuth', async (request, h) => {
    await check(request);
    return h.continue;
  });
}
