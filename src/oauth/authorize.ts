import { inTransaction } from '../db/tx.js';
import { badRequest } from '../http/errors.js';
import { API } from '../http/paths.js';
import { hmacSha256, randomToken, safeEqual, sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { OAuthClients } from './clients.js';
import type { Client } from './types.js';
import type { OAuthErrorCode } from './errors.js';
import { isWellFormedChallenge } from './pkce.js';
import { asResourceKind, parseResource, resourceUrl, type ResourceKind } from './resources.js';
import { formatScope, isScope, isSubset, MCP_SCOPE, parseScope } from './scopes.js';
import * as store from './store/index.js';
import type { WorkspaceChoice } from './workspace-choice.js';

const CODE_TTL_SEC = 60;
/** How long a sign-in/consent page stays usable before the request must start over. */
const REQUEST_STATE_TTL_SEC = 30 * 60;

/** A validated authorization request (RFC 6749 4.1.1 with RFC 7636 4.3). */
export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  codeChallenge: string;
  /** What the tokens will be for (RFC 8707 `resource`; the REST API when absent). */
  resource: ResourceKind;
}

/** A request for the MCP resource or its scope exposes one workspace, chosen on the consent page. */
export const bindsWorkspace = (request: AuthorizeRequest): boolean =>
  request.resource === 'mcp' || request.scopes.includes(MCP_SCOPE);

export type AuthorizeValidation =
  | { kind: 'ok'; request: AuthorizeRequest; client: Client }
  /** Unknown client or unregistered redirect_uri: shown to the user, never redirected (RFC 6749 4.1.2.1). */
  | { kind: 'page'; message: string; advice?: string }
  | { kind: 'redirect'; url: string; error: OAuthErrorCode };

/** Builds `redirect_uri?...` keeping the URI's own query, with iss always added (RFC 9207). */
function redirectWith(redirectUri: string, params: Record<string, string | null | undefined>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== null && value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set('iss', issuer);
  return url.href;
}

/**
 * The authorize endpoint's rules, without HTTP: validating a request, carrying it across the
 * sign-in and consent pages (signed, short-lived request state), and issuing the code.
 */
export function createAuthorize(kernel: Kernel, clients: OAuthClients, workspaces: WorkspaceChoice) {
  const { db, clock, config, secrets } = kernel;
  const issuer = config.publicUrl;
  const pageKey = hmacSha256(secrets.jwtSigningKey, 'gantry oauth pages v1');

  async function validate(query: Record<string, unknown>): Promise<AuthorizeValidation> {
    const one = (name: string): string | undefined | null => {
      const value = query[name];
      if (value === undefined) return undefined;
      return typeof value === 'string' ? value : null; // repeated: RFC 6749 3.1 forbids it
    };
    const clientId = one('client_id');
    if (!clientId)
      return { kind: 'page', message: 'The request names no valid client (client_id is missing or repeated).' };
    const resolved = await clients.resolve(clientId);
    if ('problem' in resolved) return { kind: 'page', message: resolved.problem, advice: resolved.advice };
    const { client } = resolved;
    const redirectUri = one('redirect_uri');
    if (!redirectUri)
      return { kind: 'page', message: 'The request has no redirect_uri (it is required, or it was repeated).' };
    // Exact string match; a public client's loopback URI on any port (docs/oauth.md, Redirect URIs).
    if (!clients.redirectAllowed(client, redirectUri))
      return { kind: 'page', message: 'The redirect_uri is not registered for this application.' };

    const stateRaw = one('state');
    const state = typeof stateRaw === 'string' ? stateRaw : null;
    const fail = (error: OAuthErrorCode, description: string): AuthorizeValidation => ({
      kind: 'redirect',
      error,
      url: redirectWith(redirectUri, { error, error_description: description, state }, issuer),
    });
    if (stateRaw === null) return fail('invalid_request', 'state must be given once');
    for (const name of ['response_type', 'scope', 'code_challenge', 'code_challenge_method']) {
      if (one(name) === null) return fail('invalid_request', `${name} must be given once`);
    }
    const responseType = one('response_type');
    if (!responseType) return fail('invalid_request', 'response_type is required');
    if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
    const scopeRaw = one('scope');
    if (!scopeRaw) return fail('invalid_request', 'scope is required');
    const scopes = parseScope(scopeRaw);
    if (!scopes) return fail('invalid_scope', 'scope is malformed');
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length > 0) return fail('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
    if (!isSubset(scopes, client.scopes)) return fail('invalid_scope', 'The application may not ask for this scope');
    // RFC 8707 2: one resource per request here (several would need a token for each).
    const resourceRaw = one('resource');
    if (resourceRaw === null) return fail('invalid_target', 'Ask for one resource per request');
    let resource: ResourceKind = 'api';
    if (resourceRaw !== undefined) {
      const parsed = parseResource(issuer, resourceRaw);
      if ('problem' in parsed) return fail('invalid_target', parsed.problem);
      resource = parsed.kind;
    }
    const challenge = one('code_challenge');
    if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE)');
    const method = one('code_challenge_method');
    if (!method) return fail('invalid_request', 'code_challenge_method is required and must be S256');
    if (method !== 'S256')
      return fail('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
    if (!isWellFormedChallenge(challenge))
      return fail('invalid_request', 'code_challenge must be the BASE64URL SHA-256 of the verifier (43 characters)');
    return {
      kind: 'ok',
      client,
      request: {
        clientId: client.id,
        redirectUri,
        scopes: formatScope(scopes).split(' '),
        state,
        codeChallenge: challenge,
        resource,
      },
    };
  }

  /** The request carried by the pages as one signed hidden value. */
  function sealRequest(request: AuthorizeRequest): string {
    const body = Buffer.from(JSON.stringify({ ...request, iat: Math.floor(clock.now().getTime() / 1000) })).toString(
      'base64url',
    );
    return `${body}.${hmacSha256(pageKey, `request|${body}`).toString('base64url')}`;
  }

  function openRequest(sealed: string): AuthorizeRequest | null {
    const [body, mac, extra] = sealed.split('.');
    if (!body || !mac || extra !== undefined) return null;
    if (!safeEqual(mac, hmacSha256(pageKey, `request|${body}`).toString('base64url'))) return null;
    try {
      const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as AuthorizeRequest & { iat: number };
      if (clock.now().getTime() / 1000 - parsed.iat > REQUEST_STATE_TTL_SEC) return null;
      return {
        clientId: parsed.clientId,
        redirectUri: parsed.redirectUri,
        scopes: parsed.scopes,
        state: parsed.state,
        codeChallenge: parsed.codeChallenge,
        resource: asResourceKind(parsed.resource),
      };
    } catch {
      return null;
    }
  }

  /** The authorize URL of a request: where the sign-in continues (after a magic link too). */
  function requestUrl(request: AuthorizeRequest): string {
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: request.clientId,
      redirect_uri: request.redirectUri,
      scope: request.scopes.join(' '),
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    });
    if (request.state !== null) params.set('state', request.state);
    if (request.resource !== 'api') params.set('resource', resourceUrl(issuer, request.resource));
    return `${API}/oauth/authorize?${params.toString()}`;
  }

  /** Anti-CSRF value bound to a browser secret (the session or pre-session cookie) and a purpose. */
  return {
    issuer,
    validate,
    sealRequest,
    openRequest,
    requestUrl,

    /** The workspaces the consent page offers a request that binds one; null when the user has none. */
    workspaceOptions: workspaces.options,

    /**
     * Whether the user already granted these scopes to this client (then consent is skipped).
     * Never for a request that binds a workspace: the workspace is chosen on every consent.
     */
    async hasConsent(userId: string, request: AuthorizeRequest): Promise<boolean> {
      if (bindsWorkspace(request)) return false;
      const consent = await store.findConsent(db, userId, request.clientId);
      return !!consent && isSubset(request.scopes, consent.scopes.split(' '));
    },

    /**
     * The user allowed: a grant (for the request's resource, bound to the chosen workspace when
     * the request binds one), a 60 s code bound to client, redirect_uri and challenge; consent
     * recorded. A workspace the user may not use is refused (VALIDATION_FAILED).
     */
    async approve(userId: string, request: AuthorizeRequest, chosenWorkspace?: string): Promise<string> {
      let workspaceId: string | null = null;
      if (bindsWorkspace(request)) {
        workspaceId = await workspaces.check(userId, chosenWorkspace);
        if (!workspaceId) throw badRequest('Choose one of your workspaces (workspace_id)');
      }
      const code = randomToken(32);
      const now = clock.now();
      await inTransaction(db, async (trx) => {
        const grantId = newId();
        const scope = request.scopes.join(' ');
        await store.insertGrant(trx, {
          id: grantId,
          client_id: request.clientId,
          user_id: userId,
          scopes: scope,
          resource: request.resource,
          workspace_id: workspaceId,
          created_at: now.toISOString(),
          revoked_at: null,
          revoke_reason: null,
        });
        await store.insertCode(trx, {
          code_hash: sha256Hex(code),
          grant_id: grantId,
          client_id: request.clientId,
          user_id: userId,
          redirect_uri: request.redirectUri,
          scopes: scope,
          code_challenge: request.codeChallenge,
          created_at: now.toISOString(),
          expires_at: new Date(now.getTime() + CODE_TTL_SEC * 1000).toISOString(),
          consumed_at: null,
        });
        const previous = await store.findConsent(trx, userId, request.clientId);
        const merged = formatScope([...(previous ? previous.scopes.split(' ') : []), ...request.scopes]);
        await store.upsertConsent(trx, {
          user_id: userId,
          client_id: request.clientId,
          scopes: merged,
          at: now.toISOString(),
        });
      });
      return redirectWith(request.redirectUri, { code, state: request.state }, issuer);
    },

    deny(request: AuthorizeRequest): string {
      return redirectWith(
        request.redirectUri,
        { error: 'access_denied', error_description: 'The user denied the request', state: request.state },
        issuer,
      );
    },
  };
}
