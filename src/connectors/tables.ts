import type { Generated, Selectable } from 'kysely';

export interface ConnectorDefinitionsTable {
  id: string;
  key: string;
  name: string;
  description: string | null;
  auth_kind: string; // oauth2, credentials, none
  cred_type: string | null;
  adapter: string; // mcp, none
  authorize_url: string | null;
  token_url: string | null;
  check_url: string | null;
  client_id: string | null;
  client_secret_sealed: string | null;
  scopes: string; // JSON array
  pkce: number;
  config_schema: string; // JSON Schema
  is_system: number;
  workspace_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ConnectorInstancesTable {
  seq: Generated<number>;
  id: string;
  workspace_id: string;
  connector_key: string;
  display_name: string;
  status: string; // pending_auth, active, error, inactive
  enabled: number;
  config: string; // JSON
  last_health_check: string | null;
  health_message: string | null;
  /** Prefix of the tools' MCP names: null derived from display_name, '' none (tool-names.ts). */
  tool_prefix: string | null;
  /** shared: one credential for everyone; per_user: each member's own (docs/connectors.md, Credential modes). */
  credential_mode: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface ConnectorCredentialsTable {
  id: string;
  instance_id: string;
  cred_type: string;
  sealed_value: string;
  /** scheme://host:port the credential may be sent to (MCP instances); null: no user-set destination. */
  origin: string | null;
  scopes: string | null; // JSON array
  expires_at: string | null;
  refresh_claim: string | null;
  refresh_claimed_until: string | null;
  created_at: string;
  rotated_at: string;
}

/** A member's own credential for a per_user instance (one per instance and user). */
export interface ConnectorUserCredentialsTable {
  id: string;
  instance_id: string;
  user_id: string;
  cred_type: string;
  sealed_value: string;
  origin: string | null;
  scopes: string | null; // JSON array
  expires_at: string | null;
  refresh_claim: string | null;
  refresh_claimed_until: string | null;
  /** Why the member must link again (refresh refused, 401); null while usable. */
  relink_reason: string | null;
  created_at: string;
  rotated_at: string;
}

interface ConnectorToolsTable {
  seq: Generated<number>;
  id: string;
  instance_id: string;
  connector_key: string;
  tool_key: string;
  display_name: string;
  description: string | null;
  input_schema: string;
  output_schema: string;
  requires_approval: number;
  /** The user who last set requires_approval by hand; a sync leaves it alone then. */
  requires_approval_set_by: string | null;
  rate_limit_rpm: number | null;
  annotations: string | null; // JSON of the MCP annotations the server listed
  is_active: number;
  source: string; // auto_discovered, manual
  translations: string; // JSON {locale: {displayName?, description?}}
  /** JSON of a definition a sync found that differs from the accepted one (tool-definitions.ts); null: none. */
  pending_definition: string | null;
  pending_detected_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A name an agent has called, bound to the tool it reached (tool-names.ts). */
interface ConnectorToolNamesTable {
  workspace_id: string;
  /** The exposed name in lower case. */
  name_key: string;
  instance_id: string;
  tool_key: string;
  bound_at: string;
}

export interface ConnectorOauthStatesTable {
  state_hash: string;
  instance_id: string;
  user_id: string;
  connector_key: string;
  verifier_sealed: string | null;
  expires_at: string;
  used_at: string | null;
  created_at: string;
  /** SHA-256 of the cookie of the browser that started the link (oauth-linking.ts). */
  browser_hash: string | null;
  /** The callback's code, sealed, waiting for the linking member's confirmation (another browser finished). */
  held_code_sealed: string | null;
}

interface ConnectorToolApprovalsTable {
  seq: Generated<number>;
  id: string;
  workspace_id: string;
  instance_id: string;
  tool_id: string;
  input_sealed: string;
  status: string; // pending, approved, rejected, failed
  requested_by: string;
  decided_by: string | null;
  decided_at: string | null;
  result: string | null; // JSON of the tool's answer once approved
  target_origin: string | null; // the MCP url's origin when the call was asked
  target_digest: string | null; // SHA-256 of the instance config and tool input schema then; the approved call needs both unchanged
  created_at: string;
  /** park: a REST call, run when approved; retry: an MCP call, whose identical retry runs once approved. */
  mode: string;
  client_id: string | null; // retry: the OAuth client the call came through
  args_digest: string | null; // retry: SHA-256 of the canonical JSON of the arguments
  expires_at: string | null; // retry: deadline to decide (pending) or to use (approved)
  consumed_at: string | null; // retry: when the caller got its one outcome (the run, or the refusal)
}

export interface ConnectorsTables {
  connector_definitions: ConnectorDefinitionsTable;
  connector_instances: ConnectorInstancesTable;
  connector_credentials: ConnectorCredentialsTable;
  connector_user_credentials: ConnectorUserCredentialsTable;
  connector_tools: ConnectorToolsTable;
  connector_tool_names: ConnectorToolNamesTable;
  connector_oauth_states: ConnectorOauthStatesTable;
  connector_tool_approvals: ConnectorToolApprovalsTable;
}

export type InstanceRow = Selectable<ConnectorInstancesTable>;
export type ToolRow = Selectable<ConnectorToolsTable>;
export type ApprovalRow = Selectable<ConnectorToolApprovalsTable>;
