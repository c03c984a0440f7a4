import type { WorkspaceContext } from '../accounts/access.js';
import { inTransaction } from '../db/tx.js';
import { badRequest, forbidden, notFound } from '../http/errors.js';
import { offsetMeta } from '../http/pagination.js';
import { newId } from '../lib/ids.js';
import { assertPublicUrl } from '../lib/outbound.js';
import { credentialTarget, type ConnectorsContext } from './context.js';
import { originOf } from './credentials.js';
import { credentialHeaderDetails } from './credentials.js';
import { presentInstance } from './presenters.js';
import { toolPrefixOf } from './tool-names.js';
import {
  approvalStore,
  credentialStore,
  instanceStore,
  oauthStateStore,
  toolNameStore,
  toolStore,
  userCredentialStore,
} from './store/index.js';
import type { Actor, Definition } from './types.js';
import { OWNER_OR_ADMIN } from '../accounts/roles.js';
import type { Executor } from '../db/tx.js';
import type { InstanceRow } from './tables.js';
import type { CredentialMode } from './user-links.js';

/**
 * Connector instances of a workspace: list, read, create, update, delete. Status moves are
 * exactly the table of docs/interface.md, States (docs/connectors.md); nothing else writes `status`.
 */
export function createInstances(ctx: ConnectorsContext) {
  const { db, clock, config } = ctx.kernel;

  /** Config validated against the definition's schema (ajv), and an MCP url against the SSRF guard. */
  async function checkConfig(def: Definition, value: Record<string, unknown>) {
    await ctx.definitions.assertValid(def.configSchema, value, 'config', 'config');
    if (def.adapter !== 'mcp') return;
    const refused = credentialHeaderDetails(value.headers);
    if (refused.length > 0) throw badRequest('config.headers may not carry credentials', refused);
    await assertPublicUrl(String(value.url), config.allowPrivateNetworks);
  }

  /** per_user runs only where Gantry makes the calls itself: an MCP adapter. */
  function checkMode(def: Definition, mode: CredentialMode) {
    if (mode === 'per_user' && def.adapter !== 'mcp')
      throw badRequest('credentialMode per_user needs a connector that runs MCP tools', [
        { field: 'credentialMode', message: 'per_user is only for MCP connectors', type: 'any.only' },
      ]);
  }

  /**
   * A switch deletes the credentials of the mode left (docs/connectors.md, Credential modes):
   * the shared credential never becomes a member's own, nor a member's token everyone's. The
   * instance waits for a link again (pending_auth), unless disabled.
   */
  async function switchMode(
    trx: Executor,
    actor: Actor,
    before: InstanceRow,
    mode: CredentialMode,
    changes: Parameters<typeof instanceStore.update>[2],
  ) {
    changes.credential_mode = mode;
    let dropped: Record<string, unknown> | null = null;
    if (mode === 'per_user') {
      const shared = await credentialStore.find(trx, before.id);
      if (shared) {
        await credentialStore.delete(trx, before.id);
        dropped = { credType: shared.cred_type };
      }
    } else {
      const links = await userCredentialStore.deleteByInstance(trx, before.id);
      if (links > 0) dropped = { credentialMode: 'per_user', memberLinks: links };
    }
    if (dropped)
      await ctx.audit(trx, actor, 'connector.credentials_deleted', before.id, { ...dropped, reason: 'mode_changed' });
    if (changes.status === undefined && before.enabled) changes.status = 'pending_auth';
  }

  /**
   * Renaming an instance (its display name or tool prefix: what its tools are called over MCP)
   * and deleting it are for the member who created it and the account's owners and admins
   * (docs/connectors.md, Tool names): a member who could rename another's instance could hand
   * its tools' names, and the arguments agents send under them, to a server of their own.
   */
  function assertCreatorOrAdmin(actor: Actor, instance: InstanceRow, what: string) {
    if (instance.created_by === actor.principal.userId) return;
    if (!(OWNER_OR_ADMIN as readonly string[]).includes(actor.ws.role))
      throw forbidden(`Only the member who created this connector instance, or an owner or admin, may ${what} it`);
  }

  return {
    async list(ws: WorkspaceContext, limit: number, offset: number) {
      const { rows, total } = await instanceStore.page(db, ws.workspaceId, limit, offset);
      return { data: rows.map(presentInstance), meta: offsetMeta(total, limit, offset) };
    },

    async get(ws: WorkspaceContext, id: string) {
      return presentInstance(await ctx.requireInstance(ws, id));
    },

    async create(
      actor: Actor,
      input: {
        connectorKey: string;
        displayName: string;
        config?: Record<string, unknown>;
        toolPrefix?: string | null;
        credentialMode?: CredentialMode;
      },
    ) {
      ctx.assertWriter(actor.ws);
      const def = await ctx.definitions.get(input.connectorKey, actor.ws.workspaceId);
      if (!def)
        throw badRequest(`Unknown connectorKey ${input.connectorKey}`, [
          { field: 'connectorKey', message: 'no such connector definition', type: 'any.only' },
        ]);
      const mode = input.credentialMode ?? 'shared';
      checkMode(def, mode);
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
        tool_prefix: input.toolPrefix ?? null,
        credential_mode: mode,
        last_health_check: null,
        health_message: null,
        created_by: actor.principal.userId,
        created_at: now,
        updated_at: now,
      };
      await inTransaction(db, async (trx) => {
        await instanceStore.insert(trx, row);
        await ctx.audit(trx, actor, 'connector.created', row.id, {
          connectorKey: def.key,
          displayName: row.display_name,
          credentialMode: mode,
        });
      });
      return presentInstance({ ...row, seq: 0 });
    },

    /**
     * A config whose MCP url moves to another origin drops the instance's credentials (status
     * pending_auth, audited): they were entrusted to the old origin, and any writer may
     * change the url. The owner stores them again for the new one.
     */
    async update(
      actor: Actor,
      id: string,
      patch: {
        displayName?: string;
        config?: Record<string, unknown>;
        enabled?: boolean;
        toolPrefix?: string | null;
        credentialMode?: CredentialMode;
      },
    ) {
      ctx.assertWriter(actor.ws);
      const current = await ctx.requireInstance(actor.ws, id);
      const renaming =
        (patch.displayName !== undefined && patch.displayName !== current.display_name) ||
        (patch.toolPrefix !== undefined && patch.toolPrefix !== current.tool_prefix);
      if (renaming) assertCreatorOrAdmin(actor, current, 'rename');
      let def: Definition | null = null;
      if (patch.config !== undefined || patch.credentialMode !== undefined) {
        def = await ctx.definitions.get(current.connector_key, actor.ws.workspaceId);
        if (!def) throw notFound('Connector definition');
      }
      if (def && patch.config !== undefined) await checkConfig(def, patch.config);
      const switching = patch.credentialMode !== undefined && patch.credentialMode !== current.credential_mode;
      if (def && switching) {
        // A switch decides whose identity every call carries and deletes credentials others
        // made (docs/connectors.md, Credential modes): an owner/admin decision.
        ctx.access.requireRole(actor.ws, OWNER_OR_ADMIN);
        checkMode(def, patch.credentialMode!);
      }
      const changes: Parameters<typeof instanceStore.update>[2] = { updated_at: clock.now().toISOString() };
      if (patch.displayName !== undefined) changes.display_name = patch.displayName;
      if (patch.config !== undefined) changes.config = JSON.stringify(patch.config);
      if (patch.toolPrefix !== undefined) changes.tool_prefix = patch.toolPrefix;
      if (patch.enabled !== undefined) {
        changes.enabled = patch.enabled ? 1 : 0;
        // docs/interface.md, States: "any | PATCH with enabled false -> inactive". Enabling again moves nothing:
        // the next test (or OAuth link) decides the status.
        if (!patch.enabled) changes.status = 'inactive';
      }
      return inTransaction(db, async (trx) => {
        // Compared with the config as it is now, inside the transaction (not as read above).
        const before = await instanceStore.findById(trx, id);
        if (!before) throw notFound('Connector instance');
        const from = credentialTarget(def, JSON.parse(before.config) as Record<string, unknown>);
        const to = patch.config !== undefined ? credentialTarget(def, patch.config) : from;
        // Another origin, or another path on it (one host may serve several servers: N-L3).
        const moved =
          from !== to
            ? {
                reason: originOf(from) === originOf(to) ? 'path_changed' : 'origin_changed',
                fromOrigin: originOf(from),
                toOrigin: originOf(to),
                fromTarget: from,
                toTarget: to,
              }
            : null;
        const dropped = moved ? await credentialStore.find(trx, id) : undefined;
        if (moved && dropped) {
          await credentialStore.delete(trx, id);
          if (changes.status === undefined) changes.status = 'pending_auth';
          await ctx.audit(trx, actor, 'connector.credentials_deleted', id, { credType: dropped.cred_type, ...moved });
        }
        // Members' own links were entrusted to the old server too.
        const links = moved ? await userCredentialStore.deleteByInstance(trx, id) : 0;
        if (links > 0)
          await ctx.audit(trx, actor, 'connector.credentials_deleted', id, {
            credentialMode: 'per_user',
            memberLinks: links,
            ...moved!,
          });
        if (switching && before.credential_mode !== patch.credentialMode)
          await switchMode(trx, actor, before, patch.credentialMode!, changes);
        // A gate a person set was set for the tools of this config's server; another config
        // (even another path on the same origin, where the credentials stay) may serve other
        // tools under the same names, so its syncs may raise the gates again.
        if (changes.config !== undefined && changes.config !== before.config)
          await toolStore.releaseApprovalChoices(trx, id);
        await instanceStore.update(trx, id, changes);
        const after = { ...before, ...changes };
        await ctx.audit(trx, actor, 'connector.updated', id, {
          fields: Object.keys(patch),
          ...(switching ? { fromCredentialMode: current.credential_mode, toCredentialMode: patch.credentialMode } : {}),
          ...(moved ? { fromOrigin: moved.fromOrigin, toOrigin: moved.toOrigin } : {}),
          // Old and new names: what the tools were called over MCP, and are now.
          ...(renaming
            ? {
                fromDisplayName: before.display_name,
                toDisplayName: after.display_name,
                fromToolPrefix: before.tool_prefix,
                toToolPrefix: after.tool_prefix,
                fromNamePrefix: toolPrefixOf(before),
                toNamePrefix: toolPrefixOf(after),
              }
            : {}),
        });
        return presentInstance((await instanceStore.findById(trx, id))!);
      });
    },

    /**
     * Deletes the instance with its credentials, tools, approvals and OAuth states. The names
     * agents called its tools by stay bound to it, so no other instance is served under them,
     * unless an owner or admin releases them (`releaseToolNames`, docs/connectors.md, Tool names).
     */
    async remove(actor: Actor, id: string, options: { releaseToolNames?: boolean } = {}) {
      ctx.assertWriter(actor.ws);
      const current = await ctx.requireInstance(actor.ws, id);
      assertCreatorOrAdmin(actor, current, 'delete');
      if (options.releaseToolNames) ctx.access.requireRole(actor.ws, OWNER_OR_ADMIN);
      await inTransaction(db, async (trx) => {
        await approvalStore.deleteByInstance(trx, id);
        await oauthStateStore.deleteByInstance(trx, id);
        await toolStore.deleteByInstance(trx, id);
        await credentialStore.delete(trx, id);
        await userCredentialStore.deleteByInstance(trx, id);
        await instanceStore.delete(trx, id);
        const releasedToolNames = options.releaseToolNames ? await toolNameStore.releaseByInstance(trx, id) : 0;
        await ctx.audit(trx, actor, 'connector.deleted', id, {
          connectorKey: current.connector_key,
          displayName: current.display_name,
          ...(options.releaseToolNames ? { releasedToolNames } : {}),
        });
      });
      return presentInstance(current);
    },
  };
}
