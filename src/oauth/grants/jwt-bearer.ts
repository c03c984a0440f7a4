import { inTransaction, type Executor } from '../../db/tx.js';
import { newId } from '../../lib/ids.js';
import type { Kernel } from '../../kernel.js';
import type { Client } from '../types.js';
import type { GrantMeter } from '../endpoint-limits.js';
import { invalidClient, invalidGrant, invalidRequest, invalidScope, invalidTarget } from '../errors.js';
import { parseResource, resourceUrl } from '../resources.js';
import { formatScope, MCP_SCOPE, parseScope } from '../scopes.js';
import type { AccessTokenResponse, OAuthTokens } from '../tokens.js';
import * as store from '../store/index.js';

/** RFC 7523 2.1: the JWT bearer grant; the ID-JAG is its profile (draft-ietf-oauth-identity-assertion-authz-grant). */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** draft-ietf-oauth-identity-assertion-authz-grant 7.2: what discovery lists in authorization_grant_profiles_supported. */
export const ID_JAG_PROFILE = 'urn:ietf:params:oauth:grant-profile:id-jag';

/** An ID-JAG that passed the identity provider's checks: whose it is, for which workspace, what the IdP allowed. */
export interface AcceptedAssertion {
  idpId: string;
  userId: string;
  /** The token's workspace, and its account (where the exchange is audited). */
  workspaceId: string;
  accountId: string;
  /** The IdP's subject and the assertion's jti, for the audit entry. */
  subject: string;
  jti: string;
  /** The IdP's `scope` claim; null when it named none. */
  scopes: string[] | null;
}

/**
 * What the grant needs of the enterprise identity domain (src/idp/, reached only through its
 * service): checking an assertion, and recording what came of it (the audit, and the grant's
 * origin, which `gantry idp remove` revokes).
 */
export interface IdentityAssertions {
  verify(
    assertion: string,
    context: { issuer: string; resource: string; clientId: string },
  ): Promise<{ accepted: AcceptedAssertion } | { refused: string }>;
  exchanged(
    trx: Executor,
    accepted: AcceptedAssertion,
    issued: { grantId: string; clientId: string; scopes: string },
  ): Promise<void>;
  /** A refusal after `verify` accepted (verify records its own). */
  refused(accepted: AcceptedAssertion, clientId: string, reason: string): Promise<void>;
}

/**
 * grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer with an ID-JAG (RFC 7523 2.1 and 3;
 * the MCP extension "enterprise-managed-authorization" 5). Only a confidential client that
 * authenticated may present one (the extension, 7.7). The token is an MCP token like one of
 * the code flow, bound to a workspace, with the intersection of the scopes asked for, those in
 * the assertion and those of the client. No refresh token: the extension's access token
 * response (5.2) carries none and its clients get new tokens "without user interaction" by a
 * new ID-JAG (1.1), so the IdP's policy is applied again each time; RFC 6749 1.5 leaves
 * refresh tokens to the server (docs/identity-providers.md, Refresh tokens).
 */
export async function jwtBearerGrant(
  kernel: Kernel,
  tokens: OAuthTokens,
  assertions: IdentityAssertions,
  client: Client,
  params: Record<string, string | undefined>,
  meter: GrantMeter,
): Promise<AccessTokenResponse> {
  if (client.type !== 'confidential')
    throw invalidClient(false, 'An ID-JAG is accepted only from a confidential client authenticated with HTTP Basic');
  const assertion = params.assertion;
  if (!assertion) throw invalidRequest('assertion is required');
  const { publicUrl } = kernel.config;
  const mcpResource = resourceUrl(publicUrl, 'mcp');
  if (params.resource !== undefined) {
    const parsed = parseResource(publicUrl, params.resource);
    if ('problem' in parsed) throw invalidTarget(parsed.problem);
    if (parsed.kind !== 'mcp') throw invalidTarget(`An ID-JAG grants tokens for ${mcpResource} only`);
  }
  const asked = params.scope === undefined ? null : parseScope(params.scope);
  if (params.scope !== undefined && asked === null) throw invalidScope('scope is malformed');

  const verdict = await assertions.verify(assertion, { issuer: publicUrl, resource: mcpResource, clientId: client.id });
  if ('refused' in verdict) throw invalidGrant(verdict.refused);
  const accepted = verdict.accepted;
  // The MCP resource's scope only; within what the client may hold, the IdP allowed, and was asked for.
  const scopes = [MCP_SCOPE].filter(
    (s) =>
      client.scopes.includes(s) && (accepted.scopes ?? [MCP_SCOPE]).includes(s) && (asked ?? [MCP_SCOPE]).includes(s),
  );
  if (scopes.length === 0) {
    const reason = `No scope left: the token would need ${MCP_SCOPE}, allowed by the client, the assertion and the request`;
    await assertions.refused(accepted, client.id, reason);
    throw invalidScope(reason);
  }
  const refused = await meter(accepted.userId);
  if (refused) throw refused;
  const scope = formatScope(scopes);
  return inTransaction(kernel.db, async (trx) => {
    const grant = {
      id: newId(),
      clientId: client.id,
      userId: accepted.userId,
      resource: 'mcp' as const,
      workspaceId: accepted.workspaceId,
    };
    await store.insertGrant(trx, {
      id: grant.id,
      client_id: client.id,
      user_id: accepted.userId,
      scopes: scope,
      resource: 'mcp',
      workspace_id: accepted.workspaceId,
      created_at: kernel.clock.now().toISOString(),
      revoked_at: null,
      revoke_reason: null,
    });
    await assertions.exchanged(trx, accepted, { grantId: grant.id, clientId: client.id, scopes: scope });
    return tokens.respondWithoutRefresh(grant, scope);
  });
}
