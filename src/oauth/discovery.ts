import type { Config } from '../config.js';
import { apiUrl } from '../http/paths.js';
import { SCOPE_NAMES } from './scopes.js';
import { ID_JAG_PROFILE, JWT_BEARER_GRANT } from './grants/jwt-bearer.js';

/**
 * RFC 8414 metadata, served identically at both well-known paths (docs/interface.md,
 * OAuth). No jwks_uri or ID-token fields: tokens are signed with a symmetric key and no ID
 * tokens are issued. Clients may register themselves (docs/oauth.md, Self-registered clients):
 * by metadata document and at registration_endpoint, each unless the operator switched it off.
 * With documents off, MCP clients register at the endpoint instead or use a pre-registered
 * client (MCP 2025-11-25, Authorization, Client Registration: documents first when advertised).
 */
export function discoveryDocument(
  config: Pick<Config, 'publicUrl' | 'oauthDynamicRegistration' | 'oauthMetadataDocuments'>,
) {
  const { publicUrl } = config;
  const base = apiUrl(publicUrl, '/oauth');
  return Object.freeze({
    issuer: publicUrl,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    userinfo_endpoint: `${base}/userinfo`,
    revocation_endpoint: `${base}/revoke`,
    ...(config.oauthDynamicRegistration ? { registration_endpoint: `${base}/register` } : {}),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', JWT_BEARER_GRANT],
    // ID-JAGs from the operator's identity providers (docs/identity-providers.md, ID-JAG).
    authorization_grant_profiles_supported: [ID_JAG_PROFILE],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: SCOPE_NAMES,
    subject_types_supported: ['public'],
    claims_supported: ['sub', 'email', 'email_verified', 'name', 'preferred_username'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: config.oauthMetadataDocuments.enabled,
  });
}
