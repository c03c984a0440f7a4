import type { ResourceKind } from './resources.js';

/** How a client came to be: `gantry client create`, RFC 7591 registration, or a Client ID Metadata Document. */
export type ClientRegistration = 'cli' | 'dynamic' | 'metadata_document';

/** A registered third-party application. Secrets are stored as SHA-256 (256 random bits need no KDF). */
export interface OAuthClientsTable {
  id: string; // a UUID, or the document's URL for a metadata_document client
  name: string;
  type: 'confidential' | 'public';
  secret_hash: string | null;
  redirect_uris: string; // JSON array, matched exactly
  scopes: string; // JSON array of allowed scopes
  registration: ClientRegistration;
  metadata_expires_at: string | null; // metadata_document only: until when the stored copy is used
  created_at: string;
  updated_at: string;
}

/**
 * One authorization: the code and every refresh/access token issued from it (the refresh
 * token family). Revoking it ends them all.
 */
export interface OAuthGrantsTable {
  id: string;
  client_id: string;
  user_id: string;
  scopes: string; // space-separated, as granted
  /** What its tokens are for (resources.ts): 'api' or 'mcp'. */
  resource: ResourceKind;
  /** The workspace an MCP grant exposes (chosen at consent); null for REST API grants. */
  workspace_id: string | null;
  created_at: string;
  revoked_at: string | null;
  revoke_reason: string | null;
}

export interface OAuthCodesTable {
  code_hash: string; // SHA-256 hex
  grant_id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scopes: string;
  code_challenge: string;
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
}

export interface OAuthRefreshTokensTable {
  token_hash: string; // SHA-256 hex; the key
  grant_id: string;
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
}

/** Access tokens revoked one by one (RFC 7009); kept until they would have expired anyway. */
interface OAuthRevokedAccessTokensTable {
  jti: string;
  grant_id: string;
  expires_at: string;
  created_at: string;
}

/** What a user agreed to give a client; a request within it skips the consent page. */
interface OAuthConsentsTable {
  user_id: string;
  client_id: string;
  scopes: string;
  created_at: string;
  updated_at: string;
}

export interface OAuthTables {
  oauth_clients: OAuthClientsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_refresh_tokens: OAuthRefreshTokensTable;
  oauth_revoked_access_tokens: OAuthRevokedAccessTokensTable;
  oauth_consents: OAuthConsentsTable;
}
