import type { Kernel } from '../kernel.js';
import type { Principal } from '../http/auth.js';
import type { WorkspaceContext } from '../accounts/access.js';
import type { AccountAccess } from '../accounts/access.js';
import type { IdentityService } from '../identity/service.js';
import type { NotificationsService } from '../notifications/service.js';
import { actorName, recordAudit, type AuditAction } from '../audit/record.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { DomainError, badRequest, conflict, notFound } from '../http/errors.js';
import { offsetMeta } from '../http/pagination.js';
import { newId } from '../lib/ids.js';
import type { Role } from '../accounts/roles.js';
import type { WorkspaceRole } from '../accounts/workspaces.js';
import { createDefinitions, type CredType, type CustomDefinitionInput, type Definition } from './definitions.js';
import { assertPublicUrl } from '../lib/outbound.js';
import { assertCredentialKeys, authHeaders, credentialHeaderDetails, openCredentials, originOf, sealCredentials } from './credentials.js';
import { presentCredentialRecord, presentCredentialStatus, presentDefinition, presentInstance } from './presenters.js';
import { credentialStore, instanceStore } from './store.js';
import { closeMcp, openMcp, pingMcp } from './mcp.js';
import { guardedFetch, readLimited } from '../lib/outbound.js';
import { createToolsService } from './tools.js';
import { createOauthService } from './oauth.js';
import { reloadKeyring, KEYRING_TOPIC } from './rotation.js';

/**
 * Roles that may change connectors: an account role among these and a workspace role that
 * writes (a workspace viewer reads only). Every member of the workspace may read them.
 */
export const CONNECTOR_WRITERS: readonly Role[] = ['owner', 'admin', 'member'];
export const WORKSPACE_WRITERS: readonly WorkspaceRole[] = ['admin', 'member'];

export interface ConnectorsDeps {
  access: AccountAccess;
  identity: IdentityService;
  notifications: NotificationsService;
}

export interface Actor {
  principal: Principal;
  ws: WorkspaceContext;
}

/**
 * Connector instances of a workspace, their credentials, tools and OAuth linking. Status
 * moves are exactly the spec's table (docs/connectors.md); nothing else writes `status`.
 */
export function createConnectorsService(kernel: Kernel, deps: ConnectorsDeps) {
  const { db, clock, secrets, config } = kernel;
  const definitions = createDefinitions(kernel);
  kernel.changes.subscribe(KEYRING_TOPIC, () => reloadKeyring(kernel));

  async function audit(ex: Executor, actor: Actor, action: AuditAction, targetId: string, metadata: Record<string, unknown> = {}) {
    const user = await deps.identity.getUser(actor.principal.userId, ex);
    await recordAudit(ex, { accountId: actor.ws.accountId, action, actorId: actor.principal.userId, actorUsername: actorName(user), targetId, metadata, at: clock.now() });
  }

  function assertWriter(ws: WorkspaceContext) {
    deps.access.assertWritable(ws);
    deps.access.requireRole(ws, CONNECTOR_WRITERS);
    deps.access.requireWorkspaceRole(ws, WORKSPACE_WRITERS);
  }

  async function requireInstance(ws: WorkspaceContext, id: string, ex: Executor = db) {
    const row = await instanceStore.find(ex, ws.workspaceId, id);
    if (!row) throw notFound('Connector instance');
    return row;
  }

  /** Config validated against the definition's schema (ajv), and an MCP url against the SSRF guard. */
  async function checkConfig(def: Definition, value: Record<string, unknown>) {
    definitions.assertValid(def.configSchema, value, 'config', 'config');
    if (def.adapter !== 'mcp') return;
    const refused = credentialHeaderDetails(value.headers);
    if (refused.length > 0) throw badRequest('config.headers may not carry credentials', refused);
    await assertPublicUrl(String(value.url), config.allowPrivateNetworks);
  }

  async function credentialValues(instanceId: string) {
    const row = await credentialStore.find(db, instanceId);
    if (!row) return null;
    return { row, values: openCredentials(secrets, instanceId, row.cred_type, row.sealed_value, row.origin) };
  }

  /**
   * The origin an instance's credentials are bound to: the MCP url's, since a member can
   * change that url; null for definitions whose destinations only the operator sets.
   */
  function credentialOrigin(def: Definition | null, instanceConfig: Record<string, unknown>): string | null {
    return def?.adapter === 'mcp' ? originOf(instanceConfig.url) : null;
  }

  /**
   * Where an MCP instance connects, with its configured headers and stored credential. The
   * credential goes only to the origin it was stored for: an update that moves the url
   * drops it, and this check refuses the call should a bound credential and the url disagree.
   */
  async function mcpTarget(instance: { id: string; config: string }) {
    const cfg = JSON.parse(instance.config) as { url: string; headers?: Record<string, string> };
    const cred = await credentialValues(instance.id);
    if (cred && cred.row.origin !== null && cred.row.origin !== originOf(cfg.url)) {
      throw conflict(`The stored credentials are bound to ${cred.row.origin}, not to ${originOf(cfg.url) ?? 'this url'}: store them again for this url`);
    }
    return { url: cfg.url, headers: { ...(cfg.headers ?? {}), ...(cred ? authHeaders(cred.row.cred_type, cred.values) : {}) }, allowPrivate: config.allowPrivateNetworks };
  }

  const tools = createToolsService(kernel, { definitions, requireInstance, assertWriter, audit, mcpTarget, access: deps.access });
  const oauth = createOauthService(kernel, { definitions, requireInstance, assertWriter, audit, notifications: deps.notifications, access: deps.access });

  return {
    definitions,
    tools,
    oauth,

    async listDefinitions(ws: WorkspaceContext) {
      return (await definitions.list(ws.workspaceId)).map(presentDefinition);
    },

    async createDefinition(actor: Actor, input: CustomDefinitionInput) {
      assertWriter(actor.ws);
      const def = await inTransaction(db, async (trx) => {
        const created = await definitions.createCustom(trx, actor.ws.workspaceId, input);
        await audit(trx, actor, 'connector.created', created.key, { definition: created.key });
        return created;
      });
      return presentDefinition(def);
    },

    async list(ws: WorkspaceContext, limit: number, offset: number) {
      const { rows, total } = await instanceStore.page(db, ws.workspaceId, limit, offset);
      return { data: rows.map(presentInstance), meta: offsetMeta(total, limit, offset) };
    },

    async get(ws: WorkspaceContext, id: string) {
      return presentInstance(await requireInstance(ws, id));
    },

    async create(actor: Actor, input: { connectorKey: string; displayName: string; config?: Record<string, unknown> }) {
      assertWriter(actor.ws);
      const def = await definitions.get(input.connectorKey, actor.ws.workspaceId);
      if (!def) throw badRequest(`Unknown connectorKey ${input.connectorKey}`, [{ field: 'connectorKey', message: 'no such connector definition', type: 'any.only' }]);
      const cfg = input.config ?? {};
      await checkConfig(def, cfg);
      const now = clock.now().toISOString();
      const row = {
        id: newId(),
        workspace_id: actor.ws.workspaceId,
        connector_key: def.key,
        display_name: input.displayName,
        status: 'pending_auth',
        enabled: 1,
        config: JSON.stringify(cfg),
        last_health_check: null,
        health_message: null,
        created_by: actor.principal.userId,
        created_at: now,
        updated_at: now,
      };
      await inTransaction(db, async (trx) => {
        await instanceStore.insert(trx, row);
        await audit(trx, actor, 'connector.created', row.id, { connectorKey: def.key, displayName: row.display_name });
      });
      return presentInstance({ ...row, seq: 0 });
    },

    /**
     * A config whose MCP url moves to another origin drops the instance's credentials (status
     * pending_auth, audited): they were entrusted to the old origin, and any writer may
     * change the url. The owner stores them again for the new one.
     */
    async update(actor: Actor, id: string, patch: { displayName?: string; config?: Record<string, unknown>; enabled?: boolean }) {
      assertWriter(actor.ws);
      const current = await requireInstance(actor.ws, id);
      let def: Definition | null = null;
      if (patch.config !== undefined) {
        def = await definitions.get(current.connector_key, actor.ws.workspaceId);
        if (!def) throw notFound('Connector definition');
        await checkConfig(def, patch.config);
      }
      const changes: Parameters<typeof instanceStore.update>[2] = { updated_at: clock.now().toISOString() };
      if (patch.displayName !== undefined) changes.display_name = patch.displayName;
      if (patch.config !== undefined) changes.config = JSON.stringify(patch.config);
      if (patch.enabled !== undefined) {
        changes.enabled = patch.enabled ? 1 : 0;
        // Spec: "any | PATCH with enabled false -> inactive". Enabling again moves nothing:
        // the next test (or OAuth link) decides the status.
        if (!patch.enabled) changes.status = 'inactive';
      }
      return inTransaction(db, async (trx) => {
        // Compared with the config as it is now, inside the transaction (not as read above).
        const before = await instanceStore.findById(trx, id);
        if (!before) throw notFound('Connector instance');
        const from = credentialOrigin(def, JSON.parse(before.config) as Record<string, unknown>);
        const to = patch.config !== undefined ? credentialOrigin(def, patch.config) : from;
        const moved = from !== to ? { from, to } : null;
        const dropped = moved ? await credentialStore.find(trx, id) : undefined;
        if (moved && dropped) {
          await credentialStore.delete(trx, id);
          if (changes.status === undefined) changes.status = 'pending_auth';
          await audit(trx, actor, 'connector.credentials_deleted', id, { credType: dropped.cred_type, reason: 'origin_changed', fromOrigin: moved.from, toOrigin: moved.to });
        }
        await instanceStore.update(trx, id, changes);
        await audit(trx, actor, 'connector.updated', id, { fields: Object.keys(patch), ...(moved ? { fromOrigin: moved.from, toOrigin: moved.to } : {}) });
        return presentInstance((await instanceStore.findById(trx, id))!);
      });
    },

    /** Deletes the instance with its credentials, tools, approvals and OAuth states. */
    async remove(actor: Actor, id: string) {
      assertWriter(actor.ws);
      const current = await requireInstance(actor.ws, id);
      await inTransaction(db, async (trx) => {
        await trx.deleteFrom('connector_tool_approvals').where('instance_id', '=', id).execute();
        await trx.deleteFrom('connector_oauth_states').where('instance_id', '=', id).execute();
        await trx.deleteFrom('connector_tools').where('instance_id', '=', id).execute();
        await credentialStore.delete(trx, id);
        await instanceStore.delete(trx, id);
        await audit(trx, actor, 'connector.deleted', id, { connectorKey: current.connector_key });
      });
      return presentInstance(current);
    },

    async storeCredentials(actor: Actor, id: string, input: { credType: CredType; credentials: Record<string, unknown>; scopes?: string[] }) {
      assertWriter(actor.ws);
      const instance = await requireInstance(actor.ws, id);
      assertCredentialKeys(input.credType, input.credentials);
      const values = input.credentials as Record<string, string>;
      const now = clock.now().toISOString();
      const origin = credentialOrigin(await definitions.get(instance.connector_key, actor.ws.workspaceId), JSON.parse(instance.config) as Record<string, unknown>);
      const sealed = sealCredentials(secrets, id, input.credType, values, origin);
      const expiresIn = input.credType === 'oauth2' && values.expires_in ? Number(values.expires_in) : NaN;
      const expiresAt = Number.isFinite(expiresIn) ? new Date(clock.now().getTime() + expiresIn * 1000).toISOString() : values.expires_at && !Number.isNaN(Date.parse(values.expires_at)) ? new Date(values.expires_at).toISOString() : null;
      return inTransaction(db, async (trx) => {
        const existing = await credentialStore.find(trx, id);
        const credId = existing?.id ?? newId();
        await trx.deleteFrom('connector_credentials').where('instance_id', '=', id).execute();
        await trx
          .insertInto('connector_credentials')
          .values({ id: credId, instance_id: id, cred_type: input.credType, sealed_value: sealed, origin, scopes: input.scopes ? JSON.stringify(input.scopes) : null, expires_at: input.credType === 'oauth2' ? expiresAt : null, refresh_claim: null, refresh_claimed_until: null, created_at: existing?.created_at ?? now, rotated_at: now })
          .execute();
        await audit(trx, actor, 'connector.credentials_stored', id, { credType: input.credType, replaced: !!existing, origin });
        return presentCredentialRecord({ id: credId, instance_id: id, cred_type: input.credType, rotated_at: now });
      });
    },

    async credentialStatus(ws: WorkspaceContext, id: string) {
      await requireInstance(ws, id);
      return presentCredentialStatus(await credentialStore.find(db, id));
    },

    /** Spec: "any | DELETE credentials | credentials removed -> pending_auth". */
    async deleteCredentials(actor: Actor, id: string) {
      assertWriter(actor.ws);
      await requireInstance(actor.ws, id);
      return inTransaction(db, async (trx) => {
        const existing = await credentialStore.find(trx, id);
        if (!existing) throw notFound('Credentials');
        await credentialStore.delete(trx, id);
        await instanceStore.update(trx, id, { status: 'pending_auth', updated_at: clock.now().toISOString() });
        await audit(trx, actor, 'connector.credentials_deleted', id, { credType: existing.cred_type });
        return presentCredentialRecord({ ...existing, rotated_at: clock.now().toISOString() });
      });
    },

    /**
     * Health test per definition: MCP initialize (or server/discover) + ping; OAuth: the check
     * URL with the token; others: whether the credentials they need are stored. Healthy ->
     * active, unhealthy -> error (a disabled instance stays inactive; see docs).
     */
    async test(actor: Actor, id: string) {
      assertWriter(actor.ws);
      const instance = await requireInstance(actor.ws, id);
      const def = await definitions.get(instance.connector_key, actor.ws.workspaceId);
      const started = performance.now();
      let healthy = false;
      let message: string | null = null;
      try {
        if (!def) throw new Error('connector definition no longer exists');
        if (def.adapter === 'mcp') {
          const session = await openMcp(await mcpTarget(instance));
          try {
            await pingMcp(session);
            message = `MCP server reachable (protocol ${session.protocolVersion})`;
          } finally {
            await closeMcp(session);
          }
        } else if (def.authKind === 'oauth2') {
          const cred = await credentialValues(id);
          if (!cred) throw new Error('not linked: no OAuth token stored');
          if (cred.row.expires_at && cred.row.expires_at <= clock.now().toISOString()) throw new Error('the OAuth token has expired');
          if (def.oauth?.checkUrl) {
            const res = await guardedFetch({ allowPrivate: config.allowPrivateNetworks })(def.oauth.checkUrl, { headers: { ...authHeaders('oauth2', cred.values), accept: 'application/json' } });
            await readLimited(res, 64 * 1024).catch(() => '');
            if (!res.ok) throw new Error(`check URL answered ${res.status}`);
            message = `check URL answered ${res.status}`;
          } else message = 'token present (no check URL configured)';
        } else if (def.authKind === 'credentials') {
          const cred = await credentialStore.find(db, id);
          if (!cred) throw new Error(`no ${def.credType} credentials stored`);
          message = 'credentials stored';
        } else message = 'nothing to check';
        healthy = true;
      } catch (err) {
        message = err instanceof DomainError ? err.message : `unhealthy: ${(err as Error).message}`.slice(0, 500);
      }
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      const now = clock.now().toISOString();
      await inTransaction(db, async (trx) => {
        const fresh = await instanceStore.findById(trx, id);
        if (!fresh) return;
        const status = fresh.enabled ? (healthy ? 'active' : 'error') : 'inactive';
        await instanceStore.update(trx, id, { status, last_health_check: now, health_message: message, updated_at: now });
      });
      return { healthy, message, latencyMs };
    },

    /** The approval decisions are owner/admin (tools.ts). */
  };
}

export type ConnectorsService = ReturnType<typeof createConnectorsService>;
