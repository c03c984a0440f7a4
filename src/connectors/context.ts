import { LRUCache } from 'lru-cache';
import type { Kernel } from '../kernel.js';
import { KEYRING_TOPIC } from '../lib/sealed-rotation.js';
import type { AccountAccess, WorkspaceContext } from '../accounts/access.js';
import { OWNER_OR_ADMIN, type Role, type WorkspaceRole } from '../accounts/roles.js';
import type { NotificationsService } from '../notifications/service.js';
import type { AuditAction } from '../audit/actions.js';
import type { AuditService } from '../audit/service.js';
import type { Executor } from '../db/tx.js';
import { conflict, notFound } from '../http/errors.js';
import { authHeaders, boundTo, credentialTargetOf, openCredentials } from './credentials.js';
import type { Definitions } from './definitions.js';
import type { McpTarget } from './mcp.js';
import { credentialStore, instanceStore, userCredentialStore } from './store/index.js';
import { isPerUser, LinkRequired, linkUrlOf, openUserCredentials } from './user-links.js';
import type { InstanceRow } from './tables.js';
import { TOOLS_CHANGED_TOPIC, type Actor, type Definition } from './types.js';
import { createApproverProof, type ApproverProof, type SecondFactorProofs } from './approver-proof.js';

/**
 * Roles that may change connectors: an account role among these and a workspace role that
 * writes (a workspace viewer reads only). Every member of the workspace may read them.
 */
const CONNECTOR_WRITERS: readonly Role[] = ['owner', 'admin', 'member'];
const WORKSPACE_WRITERS: readonly WorkspaceRole[] = ['admin', 'member'];

export interface ConnectorsDeps {
  access: AccountAccess;
  notifications: NotificationsService;
  audit: AuditService;
  /** Identity's answer to the step-up rule of approvals (approver-proof.ts). */
  secondFactors: SecondFactorProofs;
}

/** What every connectors use case shares: the kernel, the catalog and the checks. */
export interface ConnectorsContext {
  kernel: Kernel;
  definitions: Definitions;
  access: AccountAccess;
  notifications: NotificationsService;
  requireInstance(ws: WorkspaceContext, id: string, ex?: Executor): Promise<InstanceRow>;
  assertWriter(ws: WorkspaceContext): void;
  /** Tells every process that the workspace's MCP tools may have changed (docs/mcp.md, list_changed). */
  toolsChanged(ex: Executor, workspaceId: string): Promise<void>;
  /** Records a connectors change; every one of them may change the tools, so it also calls toolsChanged. */
  audit(
    ex: Executor,
    actor: Actor,
    action: AuditAction,
    targetId: string,
    metadata?: Record<string, unknown>,
  ): Promise<void>;
  credentialValues(instanceId: string): Promise<{
    row: NonNullable<Awaited<ReturnType<typeof credentialStore.find>>>;
    values: Record<string, string>;
  } | null>;
  /**
   * Where an MCP instance connects, as `userId`: a per_user instance sends that member's own
   * credential (LinkRequired without a usable one); `bare` leaves every credential out.
   */
  mcpTarget(instance: TargetInstance, userId: string | null, options?: { bare?: boolean }): Promise<McpTarget>;
  /** A per_user instance's caller must have a usable link of their own (LinkRequired); others pass. */
  assertLinked(instance: TargetInstance, userId: string): Promise<void>;
  /** The account's active owners and admins: who decide approvals and accept tool definitions. */
  approvers(accountId: string): Promise<string[]>;
  /** The step-up rule every approval decision passes (docs/connectors.md, Approver step-up). */
  approverProof: ApproverProof;
}

type TargetInstance = Pick<InstanceRow, 'id' | 'config' | 'connector_key' | 'credential_mode'>;

/**
 * What an instance's credentials are bound to: the MCP url's origin and path
 * (credentialTargetOf), since a member can change that url; null for definitions whose
 * destinations only the operator sets.
 */
export function credentialTarget(def: Definition | null, instanceConfig: Record<string, unknown>): string | null {
  return def?.adapter === 'mcp' ? credentialTargetOf(instanceConfig.url) : null;
}

export function createConnectorsContext(
  kernel: Kernel,
  deps: ConnectorsDeps,
  definitions: Definitions,
): ConnectorsContext {
  const { db, secrets, config } = kernel;
  // Opened values by the sealed row they came from: the row is read on every call (so a change
  // is seen at once); only unsealing it again is saved. Cleared when the keyring changes.
  const opened = new LRUCache<string, Record<string, string>>({ max: 1_000 });
  kernel.changes.subscribe(KEYRING_TOPIC, () => opened.clear());

  /** `source` hears whether the values were unsealed now or came from the cache (the vault's span). */
  async function credentialValues(instanceId: string, source?: (cached: unknown) => void) {
    const row = await credentialStore.find(db, instanceId);
    if (!row) return null;
    const key = JSON.stringify([instanceId, row.cred_type, row.origin, row.sealed_value]);
    let values = opened.get(key);
    source?.(values);
    if (!values) {
      values = openCredentials(secrets, instanceId, row.cred_type, row.sealed_value, row.origin);
      opened.set(key, values);
    }
    return { row, values };
  }

  /**
   * Names on the vault's span (docs/operations.md, Traces) whether the credential was unsealed
   * now or came from the cache of opened values; never a value.
   */
  function vaultSource(cached: unknown) {
    kernel.tracing.activeSpan().setAttribute('gantry.vault.source', cached ? 'cache' : 'unsealed');
  }

  async function usableLink(instance: TargetInstance, userId: string | null) {
    const row = userId ? await userCredentialStore.find(db, instance.id, userId) : undefined;
    if (!row || row.relink_reason !== null)
      throw new LinkRequired(instance.id, linkUrlOf(config.webUrl, instance), row?.relink_reason ?? null);
    return row;
  }

  return {
    kernel,
    definitions,
    access: deps.access,
    notifications: deps.notifications,
    credentialValues,
    approverProof: createApproverProof(deps.access, deps.secondFactors),

    toolsChanged: (ex, workspaceId) => kernel.changes.publish(ex, TOOLS_CHANGED_TOPIC, workspaceId),

    async approvers(accountId) {
      const ids = (await deps.access.activeMemberIds(accountId)) ?? [];
      const members = await Promise.all(ids.map((id) => deps.access.membership(accountId, id)));
      return ids.filter((_, i) => {
        const m = members[i];
        return m?.status === 'active' && OWNER_OR_ADMIN.includes(m.role as Role);
      });
    },

    async audit(ex, actor, action, targetId, metadata) {
      await deps.audit.record(ex, actor.principal, { accountId: actor.ws.accountId, action, targetId, metadata });
      await kernel.changes.publish(ex, TOOLS_CHANGED_TOPIC, actor.ws.workspaceId);
    },

    assertWriter(ws) {
      deps.access.assertWritable(ws);
      deps.access.requireRole(ws, CONNECTOR_WRITERS);
      deps.access.requireWorkspaceRole(ws, WORKSPACE_WRITERS);
    },

    async requireInstance(ws, id, ex = db) {
      const row = await instanceStore.find(ex, ws.workspaceId, id);
      if (!row) throw notFound('Connector instance');
      return row;
    },

    /**
     * Where an MCP instance connects, with its configured headers and stored credential. The
     * credential goes only to the origin it was stored for: an update that moves the url
     * drops it, and this check refuses the call should a bound credential and the url disagree.
     */
    async assertLinked(instance, userId) {
      if (isPerUser(instance)) await usableLink(instance, userId);
    },

    mcpTarget(instance, userId, options = {}) {
      if (!kernel.tracing.enabled) return mcpTarget(instance, userId, options);
      const attributes = {
        'gantry.connector.instance.id': instance.id,
        'gantry.credential.mode': options.bare ? 'none' : isPerUser(instance) ? 'per_user' : 'shared',
      };
      return kernel.tracing.inSpan('vault unseal', { attributes }, () => mcpTarget(instance, userId, options));
    },
  };

  /** Where an MCP instance connects, inside the vault's span (ConnectorsContext.mcpTarget). */
  async function mcpTarget(instance: TargetInstance, userId: string | null, options: { bare?: boolean }) {
    const cfg = JSON.parse(instance.config) as { url: string; headers?: Record<string, string> };
    let cred: { row: { cred_type: string; origin: string | null }; values: Record<string, string> } | null = null;
    if (options.bare) cred = null;
    else if (isPerUser(instance)) {
      const row = await usableLink(instance, userId);
      const key = JSON.stringify([instance.id, row.user_id, row.cred_type, row.origin, row.sealed_value]);
      let values = opened.get(key);
      vaultSource(values);
      if (!values) opened.set(key, (values = openUserCredentials(secrets, row)));
      cred = { row, values };
    } else cred = await credentialValues(instance.id, vaultSource);
    if (cred && cred.row.origin !== null && !boundTo(cred.row.origin, cfg.url)) {
      throw conflict(
        `The stored credentials are bound to ${cred.row.origin}, not to ${credentialTargetOf(cfg.url) ?? 'this url'}: store them again for this url`,
      );
    }
    return {
      url: cfg.url,
      headers: { ...(cfg.headers ?? {}), ...(cred ? authHeaders(cred.row.cred_type, cred.values) : {}) },
      allowPrivate: config.allowPrivateNetworks,
    };
  }
}
