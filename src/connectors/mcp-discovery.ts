import type { AuthorizationServerMetadata, FetchLike } from '@modelcontextprotocol/client';

type Sdk = typeof import('@modelcontextprotocol/client');
type ServerInfo = Awaited<ReturnType<Sdk['discoverOAuthServerInfo']>>;

/**
 * A server with neither protected resource nor authorization server metadata: the 2025-03-26
 * revision's default endpoints at the server's origin (/authorize, /token, /register). Not for
 * a server whose resource metadata names an authorization server that has no metadata.
 */
function legacyEndpoints(info: ServerInfo): AuthorizationServerMetadata | undefined {
  if (info.resourceMetadata) return undefined;
  const origin = new URL(info.authorizationServerUrl).origin;
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
  };
}

const issuerEchoFailed = (err: unknown) =>
  (err as { constructor?: { mcpBrand?: unknown }; kind?: unknown })?.constructor?.mcpBrand ===
    'mcp.IssuerMismatchError' && (err as { kind?: unknown }).kind === 'metadata';

/**
 * Protected resource metadata, then the authorization server's (docs/connectors.md,
 * Authorization of remote MCP servers), with the 2025-03-26 revision's two fallbacks for a
 * server that publishes no resource metadata: default endpoints when it has no authorization
 * server metadata either, and metadata at its root whose `issuer` carries a path (RFC 8414
 * §3.3 would refuse it). The latter is taken only when that issuer is on the server's own
 * origin: it then names no other party, and the callback's `iss` is checked against it.
 */
export async function discoverAuthorization(
  s: Sdk,
  serverUrl: string,
  options: { resourceMetadataUrl?: URL; fetchFn: FetchLike },
): Promise<ServerInfo & { metadata: AuthorizationServerMetadata | undefined }> {
  let info: ServerInfo;
  try {
    info = await s.discoverOAuthServerInfo(serverUrl, options);
  } catch (err) {
    if (!issuerEchoFailed(err)) throw err;
    const lenient = await s.discoverOAuthServerInfo(serverUrl, { ...options, skipIssuerMetadataValidation: true });
    const issuer = lenient.authorizationServerMetadata?.issuer;
    if (lenient.resourceMetadata || !issuer || new URL(issuer).origin !== new URL(serverUrl).origin) throw err;
    info = lenient;
  }
  return { ...info, metadata: info.authorizationServerMetadata ?? legacyEndpoints(info) };
}
