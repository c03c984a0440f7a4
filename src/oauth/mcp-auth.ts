import { bearerToken } from '../http/auth.js';
import { API } from '../http/paths.js';
import { MCP_PATH, resourceUrl } from './resources.js';
import { MCP_SCOPE } from './scopes.js';
import type { OAuthTokens } from './tokens.js';

/** RFC 9728 3: the well-known prefix; the MCP resource's document is at this plus its path. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** A live access token for the MCP endpoint: who calls, through which client, in which workspace. */
export interface McpToken {
  userId: string;
  clientId: string;
  scopes: string[];
  /** The one workspace the user chose on the consent page. */
  workspaceId: string;
  /** Seconds since the epoch (the token's `exp`). */
  expiresAt: number;
  /** The token's jti and its grant, for logs and audit. */
  tokenId: string;
  grantId: string;
}

/**
 * Why the MCP endpoint refuses a request (RFC 6750 3.1), with the status and the
 * `WWW-Authenticate` challenge to answer: 400 invalid_request (a malformed header), 401
 * invalid_token (or no error at all when no token was sent), 403 insufficient_scope.
 */
export class McpAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | null,
    readonly description: string,
    readonly status: 400 | 401 | 403,
    readonly wwwAuthenticate: string,
  ) {
    super(description);
    this.name = 'McpAuthError';
  }
}

/** A quoted-string value (RFC 9110 5.6.4) without the characters that would need escaping. */
const quoted = (value: string) => `"${value.replace(/["\\]/g, "'")}"`;

/**
 * The MCP endpoint as an OAuth protected resource (docs/oauth.md, MCP resource): its RFC 9728
 * metadata, its challenges, and the verifier that accepts only tokens issued for it (RFC 8707
 * audience) with its scope. Revocation is seen at once, as on the REST API: the same grant and
 * jti checks (tokens.ts).
 */
export function createMcpAuth(publicUrl: string, tokens: OAuthTokens) {
  const resource = resourceUrl(publicUrl, 'mcp');
  const metadataUrl = `${publicUrl}${PROTECTED_RESOURCE_PATH}${API}${MCP_PATH}`;

  /** `WWW-Authenticate` for a 401 or 403 of the MCP endpoint: where the metadata is, which scope to ask for. */
  function challenge(error?: { error: string | null; description: string }): string {
    const parts = error?.error
      ? [`error=${quoted(error.error)}`, `error_description=${quoted(error.description)}`]
      : [];
    parts.push(`resource_metadata=${quoted(metadataUrl)}`, `scope=${quoted(MCP_SCOPE)}`);
    return `Bearer ${parts.join(', ')}`;
  }

  function refuse(status: 400 | 401 | 403, error: McpAuthError['error'], description: string): McpAuthError {
    return new McpAuthError(error, description, status, challenge({ error, description }));
  }

  /** The token's caller, or McpAuthError (invalid_token, insufficient_scope). */
  async function verifyToken(token: string): Promise<McpToken> {
    const claims = await tokens.readAccessToken(token);
    if (!claims) throw refuse(401, 'invalid_token', 'The access token is invalid, expired or revoked');
    if (claims.resource !== 'mcp')
      throw refuse(
        401,
        'invalid_token',
        `This access token is not for ${resource}; ask for one with resource=${resource}`,
      );
    if (claims.workspaceId === null) throw refuse(401, 'invalid_token', 'The access token is bound to no workspace');
    if (!claims.scopes.includes(MCP_SCOPE))
      throw refuse(403, 'insufficient_scope', `The MCP endpoint needs the ${MCP_SCOPE} scope`);
    return {
      userId: claims.sub,
      clientId: claims.clientId,
      scopes: claims.scopes,
      workspaceId: claims.workspaceId,
      expiresAt: claims.exp,
      tokenId: claims.jti,
      grantId: claims.grantId,
    };
  }

  return {
    /** The MCP resource identifier: the `aud` of its tokens, the `resource` clients ask for. */
    resource,
    /** Where its RFC 9728 document is (the challenge's `resource_metadata`). */
    metadataUrl,
    /** RFC 9728 2: the same document at both well-known paths. No offline_access: not a scope here. */
    metadata: Object.freeze({
      resource,
      authorization_servers: [publicUrl],
      scopes_supported: [MCP_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: 'Gantry MCP',
    }),
    challenge,
    verifyToken,

    /** The whole check of an `Authorization` header: the caller, or McpAuthError (400, 401 or 403). */
    async authenticate(header: string | undefined): Promise<McpToken> {
      // No credentials: a bare challenge, no error code (RFC 6750 3.1).
      if (!header) throw new McpAuthError(null, 'A bearer access token is required', 401, challenge());
      const token = bearerToken(header);
      if (token === null)
        throw refuse(400, 'invalid_request', 'Malformed Authorization header; expected "Bearer <token>"');
      return verifyToken(token);
    },
  };
}
