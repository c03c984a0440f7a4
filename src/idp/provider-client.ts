import { LRUCache } from 'lru-cache';
import * as oidc from 'openid-client';
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { Clock } from '../lib/clock.js';
import { guardedFetch, readLimited } from '../lib/outbound.js';

/** A fetched key set is used this long before it is fetched again (jose's own default). */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/**
 * An unknown `kid` fetches the set again (the IdP rotated its keys), but not more often than
 * this: a stream of made-up key ids must not become a stream of requests to the IdP.
 */
const JWKS_COOLDOWN_MS = 30_000;
/** Discovery documents are kept this long (a changed jwks_uri or endpoint is seen within it). */
const DISCOVERY_MAX_AGE_MS = 60 * 60_000;

/** What the IdP's requests may reach: the operator configured it, on the LAN as often as not. */
const idpFetch = guardedFetch({ allowPrivate: true, timeoutMs: 10_000 });

/** Plain http only to a loopback issuer (a local Keycloak; the tests' provider): elsewhere https. */
export function isLoopbackIssuer(url: URL): boolean {
  return ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

export interface IdpClientSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/**
 * OpenID Connect discovery through openid-client (which checks the issuer the document
 * states is the one asked for), and the IdP's signing keys for ID-JAGs. Both cached per IdP,
 * bounded; the key set's age is read on the injected clock (docs/identity-providers.md, Keys).
 */
export function createProviderClients(clock: Clock) {
  const configurations = new LRUCache<string, Promise<oidc.Configuration>>({ max: 100, ttl: DISCOVERY_MAX_AGE_MS });
  const keySets = new LRUCache<string, { keys: JWTVerifyGetKey; fetchedAt: number }>({ max: 100 });

  async function discover(settings: IdpClientSettings): Promise<oidc.Configuration> {
    const url = new URL(settings.issuer);
    return oidc.discovery(
      url,
      settings.clientId,
      settings.clientSecret,
      oidc.ClientSecretBasic(settings.clientSecret),
      {
        [oidc.customFetch]: idpFetch as oidc.CustomFetch,
        execute: isLoopbackIssuer(url) ? [oidc.allowInsecureRequests] : [],
      },
    );
  }

  function configuration(idpId: string, settings: IdpClientSettings): Promise<oidc.Configuration> {
    const key = `${idpId}:${settings.clientId}`;
    let found = configurations.get(key);
    if (!found) {
      found = discover(settings);
      // A failed discovery is not remembered: the next sign-in tries again.
      found.catch(() => configurations.delete(key));
      configurations.set(key, found);
    }
    return found;
  }

  async function fetchKeySet(jwksUri: string): Promise<JWTVerifyGetKey> {
    const response = await idpFetch(jwksUri, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`the IdP's key set answered ${response.status}`);
    return createLocalJWKSet(JSON.parse(await readLimited(response)) as JSONWebKeySet);
  }

  return {
    discover,
    configuration,

    /** Forgets what is cached of an IdP (it was removed). */
    forget(idpId: string) {
      for (const key of configurations.keys()) if (key.startsWith(`${idpId}:`)) configurations.delete(key);
      keySets.delete(idpId);
    },

    /**
     * A key resolver for the IdP's JWKS: the cached set, fetched again when it is old, or when
     * it lacks the token's key and was not fetched within the cooldown (a rotation).
     */
    async keys(idpId: string, jwksUri: string): Promise<JWTVerifyGetKey> {
      const now = clock.now().getTime();
      let entry = keySets.get(idpId);
      if (!entry || now - entry.fetchedAt > JWKS_MAX_AGE_MS) {
        entry = { keys: await fetchKeySet(jwksUri), fetchedAt: now };
        keySets.set(idpId, entry);
      }
      const cached = entry;
      return async (header, token) => {
        try {
          return await cached.keys(header, token);
        } catch (err) {
          if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err;
          const current = keySets.get(idpId);
          if (current && clock.now().getTime() - current.fetchedAt < JWKS_COOLDOWN_MS) throw err;
          const fresh = { keys: await fetchKeySet(jwksUri), fetchedAt: clock.now().getTime() };
          keySets.set(idpId, fresh);
          return fresh.keys(header, token);
        }
      };
    },
  };
}
