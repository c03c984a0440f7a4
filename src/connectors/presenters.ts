import { toBool } from '../db/tx.js';
import type { ApprovalInputView } from './approval-input.js';
import { presentPendingDefinition } from './tool-definitions.js';
import type { Definition } from './types.js';
import type {
  ConnectorCredentialsTable,
  ConnectorUserCredentialsTable,
  InstanceRow,
  ApprovalRow,
  ToolRow,
} from './tables.js';

export function presentInstance(row: InstanceRow) {
  return {
    id: row.id,
    connectorKey: row.connector_key,
    displayName: row.display_name,
    status: row.status,
    enabled: toBool(row.enabled),
    config: JSON.parse(row.config) as Record<string, unknown>,
    toolPrefix: row.tool_prefix,
    credentialMode: row.credential_mode,
    lastHealthCheck: row.last_health_check,
    healthMessage: row.health_message,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Translations are {locale: {displayName?, description?}}; "fr-CA" falls back to "fr", then the default. */
export function presentTool(row: ToolRow, locale?: string) {
  let displayName = row.display_name;
  let description = row.description;
  if (locale) {
    const translations = JSON.parse(row.translations) as Record<string, { displayName?: string; description?: string }>;
    const lower = Object.fromEntries(Object.entries(translations).map(([k, v]) => [k.toLowerCase(), v]));
    const wanted = locale.toLowerCase();
    const hit = lower[wanted] ?? lower[wanted.split('-')[0]];
    if (hit?.displayName) displayName = hit.displayName;
    if (hit?.description) description = hit.description;
  }
  return {
    id: row.id,
    connectorKey: row.connector_key,
    toolKey: row.tool_key,
    displayName,
    description,
    inputSchema: JSON.parse(row.input_schema) as Record<string, unknown>,
    outputSchema: JSON.parse(row.output_schema) as Record<string, unknown>,
    requiresApproval: toBool(row.requires_approval),
    rateLimitRpm: row.rate_limit_rpm,
    isActive: toBool(row.is_active),
    source: row.source,
    /** docs/connectors.md, Tool definitions: `changed` while a sync's new definition waits for review. */
    definitionStatus: row.pending_definition === null ? 'accepted' : 'changed',
    pendingDefinition: presentPendingDefinition(row),
  };
}

/**
 * A tool as the MCP endpoint lists it, under its exposed name (tool-names.ts). The schemas
 * and annotations are passed on as the server (or the manual tool) gave them.
 */
export function presentExposedTool(row: ToolRow, name: string) {
  const outputSchema = JSON.parse(row.output_schema) as Record<string, unknown>;
  return {
    name,
    instanceId: row.instance_id,
    toolId: row.id,
    toolKey: row.tool_key,
    title: row.display_name,
    description: row.description,
    inputSchema: JSON.parse(row.input_schema) as Record<string, unknown>,
    /** null when none was given (stored as {}). */
    outputSchema: Object.keys(outputSchema).length > 0 ? outputSchema : null,
    annotations: row.annotations ? (JSON.parse(row.annotations) as Record<string, unknown>) : null,
    requiresApproval: toBool(row.requires_approval),
    rateLimitRpm: row.rate_limit_rpm,
  };
}

export function presentCredentialRecord(
  row: Pick<ConnectorCredentialsTable, 'id' | 'instance_id' | 'cred_type' | 'rotated_at'>,
) {
  return { id: row.id, instanceId: row.instance_id, credType: row.cred_type, rotatedAt: row.rotated_at };
}

export function presentCredentialStatus(row: ConnectorCredentialsTable | undefined) {
  if (!row) return { configured: false, credType: null, expiresAt: null, scopes: null };
  return {
    configured: true,
    credType: row.cred_type,
    expiresAt: row.expires_at,
    scopes: row.cred_type === 'oauth2' && row.scopes ? (JSON.parse(row.scopes) as string[]) : null,
  };
}

/**
 * A per_user instance's credential status is the caller's own link: the status fields, plus
 * the mode and whether the link must be made again (docs/connectors.md, Credential modes).
 */
export function presentUserCredentialStatus(row: ConnectorUserCredentialsTable | undefined) {
  return {
    ...presentCredentialStatus(row),
    credentialMode: 'per_user',
    relinkRequired: row ? row.relink_reason !== null : false,
    relinkReason: row?.relink_reason ?? null,
  };
}

export function presentDefinition(def: Definition) {
  return {
    key: def.key,
    name: def.name,
    description: def.description,
    authKind: def.authKind,
    credType: def.credType,
    adapter: def.adapter,
    oauth: def.oauth
      ? {
          authorizeUrl: def.oauth.authorizeUrl,
          tokenUrl: def.oauth.tokenUrl,
          checkUrl: def.oauth.checkUrl,
          scopes: def.oauth.scopes,
          pkce: def.oauth.pkce,
          configured: !!(def.oauth.clientId && def.oauth.authorizeUrl && def.oauth.tokenUrl),
        }
      : null,
    configSchema: def.configSchema,
    isSystem: def.isSystem,
    workspaceId: def.workspaceId,
  };
}

/**
 * `view` is the call's input as approvalInputView shows it, for those who may see it (the
 * approvers and the requester); others get input null.
 */
export function presentApproval(row: ApprovalRow, now: Date, view: ApprovalInputView | null = null) {
  return {
    id: row.id,
    mode: row.mode,
    instanceId: row.instance_id,
    toolId: row.tool_id,
    targetOrigin: row.target_origin,
    input: view ? view.input : null,
    inputTruncated: view ? view.inputTruncated : false,
    inputCut: view ? view.inputCut : [],
    status: approvalStatus(row, now),
    requestedBy: row.requested_by,
    clientId: row.client_id,
    expiresAt: row.expires_at,
    consumedAt: row.consumed_at,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at,
    result: row.result ? (JSON.parse(row.result) as unknown) : null,
    createdAt: row.created_at,
  };
}

/** The status an approval shows: an MCP one (mode retry) pending or approved past its deadline, and unused, is expired. */
export function approvalStatus(row: ApprovalRow, now: Date): string {
  const live = row.expires_at !== null && row.expires_at > now.toISOString();
  if (row.mode === 'retry' && !live && row.consumed_at === null && ['pending', 'approved'].includes(row.status))
    return 'expired';
  return row.status;
}
