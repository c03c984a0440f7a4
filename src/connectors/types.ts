import type { WorkspaceContext } from '../accounts/access.js';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { Principal } from '../http/auth.js';

/** Who acts: the principal and the workspace they act in (a leaf every connectors file may import). */
export interface Actor {
  principal: Principal;
  ws: WorkspaceContext;
}

/**
 * Change-feed topic, keyed by workspace id: something that can change the workspace's tools as
 * MCP serves them (an instance or tool edited, synced, enabled, its health or credentials).
 */
export const TOOLS_CHANGED_TOPIC = 'connectors.tools-changed';
/** Change-feed topic (key: the approval id) when an owner/admin decides an MCP call's approval. */
export const MCP_APPROVAL_DECIDED_TOPIC = 'connectors.mcp-approval-decided';

export const CRED_TYPES = ['oauth2', 'api_key', 'basic_auth', 'bearer_token', 'connection_string', 'custom'] as const;
export type CredType = (typeof CRED_TYPES)[number];

/** A connector definition as the service uses it (built-in, operator-defined or custom). */
export interface Definition {
  key: string;
  name: string;
  description: string | null;
  /** oauth2: linked through the provider; credentials: a stored credType; none: no secret needed. */
  authKind: 'oauth2' | 'credentials' | 'none';
  credType: CredType | null;
  /** mcp: tools come from (and calls go to) the MCP server at config.url; none: manual tools only. */
  adapter: 'mcp' | 'none';
  oauth: {
    authorizeUrl: string | null;
    tokenUrl: string | null;
    checkUrl: string | null;
    clientId: string | null;
    clientSecret: string | null;
    scopes: string[];
    pkce: boolean;
  } | null;
  configSchema: Record<string, unknown>;
  isSystem: boolean;
  workspaceId: string | null;
}

export interface SystemDefinitionInput {
  key: string;
  name: string;
  authorizeUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  pkce: boolean;
  checkUrl?: string | null;
  configSchema?: Record<string, unknown> | null;
}

export interface CustomDefinitionInput {
  key: string;
  name: string;
  description?: string | null;
  credType?: CredType | null;
  configSchema?: Record<string, unknown> | null;
}

/**
 * What an MCP caller lends an upstream call (docs/connectors.md, MCP pass-through): its
 * progress and log messages go to the caller, and, when the caller's client can sample or
 * elicit, the upstream's requests for either are put to it and the answer brought back.
 * An absent `sampling`/`elicitation` is not declared to the upstream.
 */
export interface McpRelay {
  /** Set only when the caller asked for progress (it gave a progressToken). */
  onProgress?(progress: number, total?: number, message?: string): void;
  /** Set only when the caller can be sent log messages (mcp/relay.ts). */
  onLog?(level: string, data: unknown, logger?: string): void;
  sampling?: { capability: ClientCapabilities['sampling']; createMessage(params: unknown): Promise<unknown> };
  elicitation?: { capability: ClientCapabilities['elicitation']; elicit(params: unknown): Promise<unknown> };
}

/**
 * A call that may wait on the caller's model or user (sampling, elicitation): bounded, but
 * far above OUTBOUND_TIMEOUT_MS, for the whole call and each round trip within it.
 */
export const INTERACTIVE_CALL_MS = 5 * 60_000;

/** Where an approval stands, as an MCP client is told (docs/connectors.md, Approvals of MCP calls). */
export interface McpApprovalInfo {
  id: string;
  status: 'pending' | 'rejected' | 'expired';
  /** The approval page: the id only, no credential, no personal data. */
  url: string;
  expiresAt: string;
}

/** What replaces an instance's (or a member's own) credentials: instance-credentials.ts, user-links.ts. */
export interface CredentialReplacement {
  instanceId: string;
  credType: CredType;
  values: Record<string, string>;
  /** What the values are bound to (credentialTarget: origin and path), sealed into their context. */
  origin: string | null;
  scopes: string[] | null;
  expiresAt: string | null;
  at: string;
}
