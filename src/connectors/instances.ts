import type { WorkspaceContext } from '../accounts/access.js';
import { inTransaction } from '../db/tx.js';
import { badRequest, notFound } from '../http/errors.js';
import { offsetMeta } from '../http/pagination.js';
import { newId } from '../lib/ids.js';
import { assertPublicUrl } from '../lib/outbound.js';
import { credentialOrigin, type ConnectorsContext } from './context.js';
import { credentialHeaderDetails } from './credentials.js';
import { presentInstance } from './presenters.js';
import { approvalStore, credentialStore, instanceStore, oauthStateStore, toolStore } from './store/index.js';
import type { Actor, Definition } from './types.js';

/**
 * Connector instances of a workspace: list, read, create, update, delete. Status moves are
 * exactly the table of docs/interface.md, States (docs/connectors.md); nothing else writes `status`.
 */
export function createInstances(ctx: ConnectorsContext) {
  const { db, clock, config } = ctx.kernel;

  /** Config validated against the definition's schema (ajv), and an MCP url against the SSRF guard. */
  async function checkConfig(def: Definition, value: Record<string, unknown>) {
    ctx.definitions.assertValid(def.configSchema, value, 'config', 'config');
    if (def.adapter !== 'mcp') return;
    const refused = credentialHeaderDetails(value.headers);
    if (refused.length > 0) throw badRequest('config.headers may not carry credentials', refused);
    await assertPublicUrl(String(value.url), config.allowPrivateNetworks);
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
      },
    ) {
      ctx.assertWriter(actor.ws);
      const def = await ctx.definitions.get(input.connectorKey, actor.ws.workspaceId);
      if (!def)
        throw badRequest(`Unknown connectorKey ${input.connectorKey}`, [
          { field: 'connectorKey', message: 'no such connector definition', type: 'any.only' },
        ]);
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
      patch: { displayName?: string; config?: Record<string, unknown>; enabled?: boolean; toolPrefix?: string | null },
    ) {
      ctx.assertWriter(actor.ws);
      const current = await ctx.requireInstance(actor.ws, id);
      let def: Definition | null = null;
      if (patch.config !== undefined) {
        def = await ctx.definitions.get(current.connector_key, actor.ws.workspaceId);
        if (!def) throw notFound('Connector definition');
        await checkConfig(def, patch.config);
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
        const from = credentialOrigin(def, JSON.parse(before.config) as Record<string, unknown>);
        const to = patch.config !== undefined ? credentialOrigin(def, patch.config) : from;
        const moved = from !== to ? { from, to } : null;
        const dropped = moved ? await credentialStore.find(trx, id) : undefined;
        if (moved && dropped) {
          await credentialStore.delete(trx, id);
          if (changes.status === undefined) changes.status = 'pending_auth';
          await ctx.audit(trx, actor, 'connector.credentials_deleted', id, {
            credType: dropped.cred_type,
            reason: 'origin_changed',
            fromOrigin: moved.from,
            toOrigin: moved.to,
          });
        }
        // A gate a person set was set for the tools of this config's server; another config
        // (even another path on the same origin, where the credentials stay) may serve other
        // tools under the same names, so its syncs may raise the gates again.
        if (changes.config !== undefined && changes.config !== before.config)
          await toolStore.releaseApprovalChoices(trx, id);
        await instanceStore.update(trx, id, changes);
        await ctx.audit(trx, actor, 'connector.updated', id, {
          fields: Object.keys(patch),
          ...(moved ? { fromOrigin: moved.from, toOrigin: moved.to } : {}),
        });
        return presentInstance((await instanceStore.findById(trx, id))!);
      });
    },

    /** Deletes the instance with its credentials, tools, approvals and OAuth states. */
    async remove(actor: Actor, id: string) {
      ctx.assertWriter(actor.ws);
      const current = await ctx.requireInstance(actor.ws, id);
      await inTransaction(db, async (trx) => {
        await approvalStore.deleteByInstance(trx, id);
        await oauthStateStore.deleteByInstance(trx, id);
        await toolStore.deleteByInstance(trx, id);
        await credentialStore.delete(trx, id);
        await instanceStore.delete(trx, id);
        await ctx.audit(trx, actor, 'connector.deleted', id, { connectorKey: current.connector_key });
      });
      return presentInstance(current);
    },
  };
}
