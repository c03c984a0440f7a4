import {
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { sha256Hex } from '../lib/crypto.js';
import type { Clock } from '../lib/clock.js';
import type { Executor } from '../db/tx.js';
import * as store from './store.js';

/** draft-ietf-oauth-identity-assertion-authz-grant 3.1: the JWT's media type. */
const ID_JAG_TYP = 'oauth-id-jag+jwt';
/** How far ahead an ID-JAG may expire: they are minutes-long grants (the MCP extension, 7.4.2). */
const MAX_LIFETIME_SEC = 300;
/** Clock skew tolerated on exp and iat. */
const SKEW_SEC = 30;
/** Asymmetric algorithms only (the MCP extension, 7.4.1): never none, never a shared secret. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Why an ID-JAG is refused: the token endpoint answers `invalid_grant` with this (RFC 7521 4.1.1). */
export class AssertionRefused extends Error {
  constructor(
    message: string,
    /** The configured IdP it named, when it got that far (the audit of a refusal). */
    readonly idpId: string | null = null,
  ) {
    super(message);
    this.name = 'AssertionRefused';
  }
}

/** An ID-JAG that passed every check, with the user its subject is linked to. */
export interface VerifiedAssertion {
  idpId: string;
  accountId: string | null;
  /** The operator's workspace for this IdP's tokens; null: the user's default one. */
  workspaceId: string | null;
  userId: string;
  subject: string;
  /** The scopes the IdP allowed (its `scope` claim); null when it named none. */
  scopes: string[] | null;
  jti: string;
}

export interface AssertionContext {
  /** Gantry's issuer identifier: the `aud` an ID-JAG must carry. */
  issuer: string;
  /** The MCP resource identifier: the `resource` it must carry. */
  resource: string;
  /** The client that authenticated at the token endpoint. */
  clientId: string;
}

const sameUrl = (a: string, b: string) => {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
};

/** jose's refusals in words a client developer can act on. */
function joseRefusal(err: unknown, idpId: string): AssertionRefused {
  if (err instanceof joseErrors.JWTExpired) return new AssertionRefused('The assertion has expired', idpId);
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    const what = err.claim === 'aud' ? "aud must be this server's issuer" : `the ${err.claim} claim is invalid`;
    return new AssertionRefused(`${what} (${err.reason})`, idpId);
  }
  if (err instanceof joseErrors.JWKSNoMatchingKey)
    return new AssertionRefused("No key of the identity provider's JWKS matches the assertion", idpId);
  if (err instanceof joseErrors.JWSSignatureVerificationFailed)
    return new AssertionRefused('The assertion signature is invalid', idpId);
  if (err instanceof joseErrors.JOSEAlgNotAllowed)
    return new AssertionRefused(`The assertion's algorithm is not accepted (${ALGORITHMS.join(', ')})`, idpId);
  if (err instanceof joseErrors.JOSEError) return new AssertionRefused(`The assertion is invalid (${err.code})`, idpId);
  throw err;
}

/**
 * The Identity Assertion JWT Authorization Grant's checks (draft 4.4.1; the MCP extension
 * "enterprise-managed-authorization" 5.1 and 7): typ, a configured issuer and its JWKS
 * signature, aud = our issuer, client_id = the authenticated client, resource = the MCP
 * resource, exp present, unexpired and at most five minutes ahead, iat, sub linked to a user,
 * and jti single-use (its row is the last check: a refused assertion does not spend it).
 */
export async function verifyIdJag(
  deps: { db: Executor; clock: Clock; keysOf(idp: store.IdpRow): Promise<JWTVerifyGetKey> },
  assertion: string,
  context: AssertionContext,
): Promise<VerifiedAssertion> {
  let typ: unknown;
  let unverified: JWTPayload;
  try {
    typ = decodeProtectedHeader(assertion).typ;
    unverified = decodeJwt(assertion);
  } catch {
    throw new AssertionRefused('The assertion is not a JWT');
  }
  if (typeof typ !== 'string' || !/^(application\/)?oauth-id-jag\+jwt$/i.test(typ))
    throw new AssertionRefused(`The assertion's typ must be ${ID_JAG_TYP}`);
  if (typeof unverified.iss !== 'string') throw new AssertionRefused('The assertion has no iss');
  const idp = await store.findIdpByIssuer(deps.db, unverified.iss);
  if (!idp) throw new AssertionRefused('The assertion is not from a configured identity provider');

  const now = deps.clock.now();
  let payload: JWTPayload;
  try {
    const keys = await deps.keysOf(idp);
    ({ payload } = await jwtVerify(assertion, keys, {
      issuer: idp.issuer,
      audience: context.issuer,
      algorithms: ALGORITHMS,
      currentDate: now,
      clockTolerance: SKEW_SEC,
      requiredClaims: ['exp', 'iat', 'sub', 'jti'],
    }));
  } catch (err) {
    if (err instanceof AssertionRefused) throw err;
    if (err instanceof joseErrors.JOSEError) throw joseRefusal(err, idp.id);
    throw new AssertionRefused("The identity provider's keys could not be fetched", idp.id);
  }
  const nowSec = Math.floor(now.getTime() / 1000);
  const exp = Number(payload.exp);
  if (exp - nowSec > MAX_LIFETIME_SEC + SKEW_SEC)
    throw new AssertionRefused(`The assertion must expire within ${MAX_LIFETIME_SEC} seconds`, idp.id);
  if (Number(payload.iat) > nowSec + SKEW_SEC)
    throw new AssertionRefused('The assertion is issued in the future', idp.id);
  if (payload.client_id !== context.clientId)
    throw new AssertionRefused('The assertion was issued for another client (client_id)', idp.id);
  if (typeof payload.resource !== 'string' || !sameUrl(payload.resource, context.resource))
    throw new AssertionRefused(`The assertion's resource must be ${context.resource}`, idp.id);
  if (typeof payload.jti !== 'string' || payload.jti === '')
    throw new AssertionRefused('The assertion has no jti', idp.id);
  const subject = String(payload.sub);
  const link = await store.findLink(deps.db, idp.id, subject);
  if (!link) throw new AssertionRefused("The assertion's subject is not linked to a user here", idp.id);
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter((s) => s !== '') : null;
  // Keyed by issuer and jti (the extension, 7.4.2: replay scoped to the issuer); kept until the
  // assertion would have expired, so a replay after the purge is refused by exp anyway.
  const claimed = await store.claimAssertion(
    deps.db,
    sha256Hex(`${idp.issuer}\n${payload.jti}`),
    new Date((exp + SKEW_SEC) * 1000).toISOString(),
  );
  if (!claimed) throw new AssertionRefused('The assertion was already used (jti)', idp.id);
  return {
    idpId: idp.id,
    accountId: idp.account_id,
    workspaceId: idp.workspace_id,
    userId: link.user_id,
    subject,
    scopes,
    jti: payload.jti,
  };
}
