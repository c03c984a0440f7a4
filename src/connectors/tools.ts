import type { WorkspaceContext } from '../accounts/access.js';
import { OWNER_OR_ADMIN } from '../accounts/roles.js';
import { inTransaction, toBool } from '../db/tx.js';
import { DomainError, conflict, notFound } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import type { ConnectorsContext } from './context.js';
import { authRefusal, closeMcp, listAllTools, openMcp, type McpToolDefinition } from './mcp.js';
import { createMcpReauth } from './mcp-reauth.js';
import { presentTool } from './presenters.js';
import { createToolDefinitions } from './tool-definitions.js';
import { toolStore } from './store/index.js';
import type { InstanceRow, ToolRow } from './tables.js';
import type { Actor } from './types.js';
import { upstream } from './invoke.js';

export interface ManualToolInput {
  toolKey: string;
  displayName: string;
  description?: string | null;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  requiresApproval?: boolean;
  rateLimitRpm?: number | null;
  translations?: Record<string, { displayName?: string; description?: string }>;
}

interface ToolSettingsPatch {
  enabled?: boolean;
  requiresApproval?: boolean;
  rateLimitRpm?: number | null;
}

const TRANSLATIONS_META = 'gantry/translations';

/** Tools of an instance: list, MCP sync, manual tools, enablement and approval gates. */
export function createToolCatalog(ctx: ConnectorsContext) {
  const { db, clock } = ctx.kernel;
  const reauth = createMcpReauth(ctx);
  const definitions = createToolDefinitions(ctx);

  function toRow(instance: InstanceRow, t: McpToolDefinition, now: string): Omit<ToolRow, 'seq'> {
    const meta = (t as { _meta?: Record<string, unknown> })._meta;
    const translations = meta && typeof meta[TRANSLATIONS_META] === 'object' ? meta[TRANSLATIONS_META] : {};
    return {
      id: newId(),
      instance_id: instance.id,
      connector_key: instance.connector_key,
      tool_key: t.name,
      display_name: t.title ?? (t.annotations?.title as string | undefined) ?? t.name,
      description: t.description ?? null,
      input_schema: JSON.stringify(t.inputSchema ?? { type: 'object' }),
      output_schema: JSON.stringify(t.outputSchema ?? {}),
      // MCP's destructiveHint marks tools a human should approve before they run.
      requires_approval: t.annotations?.destructiveHint === true ? 1 : 0,
      requires_approval_set_by: null,
      rate_limit_rpm: null,
      annotations: t.annotations && typeof t.annotations === 'object' ? JSON.stringify(t.annotations) : null,
      is_active: 1,
      source: 'auto_discovered',
      translations: JSON.stringify(translations),
      pending_definition: null,
      pending_detected_at: null,
      created_at: now,
      updated_at: now,
    };
  }

  return {
    async list(ws: WorkspaceContext, instanceId: string, locale?: string) {
      await ctx.requireInstance(ws, instanceId);
      return (await toolStore.list(db, instanceId)).map((t) => presentTool(t, locale));
    },

    /**
     * Pulls the adapter's tools (MCP tools/list, walked page by page outside any transaction)
     * and writes them by toolKey in one transaction: new ones accepted, changed definitions
     * held for review (tool-definitions.ts); auto-discovered tools the server no longer lists
     * are deactivated. A server failing mid-sync changes nothing. Every sync is audited.
     */
    async sync(actor: Actor, instanceId: string) {
      ctx.assertWriter(actor.ws);
      const instance = await ctx.requireInstance(actor.ws, instanceId);
      const def = await ctx.definitions.require(instance.connector_key, actor.ws.workspaceId);
      if (def.adapter === 'mcp') {
        const attempt = async (retry: boolean): Promise<McpToolDefinition[]> => {
          // A per_user instance syncs with the caller's own link (docs/connectors.md, Credential modes).
          const target = await ctx.mcpTarget(instance, actor.principal.userId);
          try {
            const session = await openMcp(target);
            try {
              return (await listAllTools(session)).tools;
            } finally {
              await closeMcp(session);
            }
          } catch (err) {
            // docs/connectors.md, Re-authorization: a refused token is refreshed once (the
            // caller's own on a per_user instance, whose refusals concern their link only).
            const userId = actor.principal.userId;
            const refusal = authRefusal(err);
            if (
              refusal?.kind === 'token' &&
              (await reauth.tokenRefused(instance, userId, target.headers.authorization, retry))
            )
              return attempt(false);
            if (refusal?.kind === 'scope') return reauth.scopeRefused(instance, userId, refusal.scopes);
            if (err instanceof DomainError) throw err;
            throw upstream(`Tool sync failed: ${(err as Error).message}`.slice(0, 300));
          }
        };
        const discovered = await attempt(true);
        const now = clock.now().toISOString();
        const unique = new Map(
          discovered.filter((t) => typeof t?.name === 'string' && t.name.length > 0).map((t) => [t.name, t]),
        );
        const rows = [...unique.values()].map((t) => toRow(instance, t, now));
        // Read before the transaction, which waits on nothing else (docs/kernel.md, Transactions).
        const approvers = await ctx.approvers(actor.ws.accountId);
        await inTransaction(db, async (trx) => {
          const synced = await definitions.applySync(trx, instance, rows, now);
          await ctx.audit(trx, actor, 'connector.tools_synced', instanceId, {
            listed: rows.length,
            added: synced.added,
            changed: synced.changed.length,
            restored: synced.restored,
            removed: synced.removed,
            ...(synced.changed.length > 0 ? { changedToolKeys: synced.changed.slice(0, 50) } : {}),
          });
          if (synced.changed.length > 0) await definitions.notifyChanged(trx, approvers, instance, synced.changed);
        });
      }
      return (await toolStore.list(db, instanceId)).map((t) => presentTool(t));
    },

    /** Accepts a tool's changed definition (owner/admin; tool-definitions.ts). */
    async acceptDefinition(actor: Actor, instanceId: string, toolId: string, expected: { detectedAt?: string }) {
      return presentTool(await definitions.accept(actor, instanceId, toolId, expected));
    },

    /** Manual tools, only on custom (non-system) connectors; both schemas must be JSON Schema. */
    async createManual(actor: Actor, instanceId: string, input: ManualToolInput) {
      ctx.assertWriter(actor.ws);
      const instance = await ctx.requireInstance(actor.ws, instanceId);
      const def = await ctx.definitions.require(instance.connector_key, actor.ws.workspaceId);
      if (def.isSystem) throw conflict('Manual tools can only be added to custom connectors');
      await ctx.definitions.assertJsonSchema(input.inputSchema, 'inputSchema');
      await ctx.definitions.assertJsonSchema(input.outputSchema, 'outputSchema');
      const now = clock.now().toISOString();
      const row: ToolRow = {
        seq: 0,
        id: newId(),
        instance_id: instanceId,
        connector_key: instance.connector_key,
        tool_key: input.toolKey,
        display_name: input.displayName,
        description: input.description ?? null,
        input_schema: JSON.stringify(input.inputSchema),
        output_schema: JSON.stringify(input.outputSchema),
        requires_approval: input.requiresApproval ? 1 : 0,
        // A manual tool's settings are a person's from the start.
        requires_approval_set_by: actor.principal.userId,
        rate_limit_rpm: input.rateLimitRpm ?? null,
        annotations: null,
        is_active: 1,
        source: 'manual',
        translations: JSON.stringify(input.translations ?? {}),
        pending_definition: null,
        pending_detected_at: null,
        created_at: now,
        updated_at: now,
      };
      await inTransaction(db, async (trx) => {
        const clash = await toolStore.findByKey(trx, instanceId, input.toolKey);
        if (clash) throw conflict(`This instance already has a tool ${input.toolKey}`);
        const { seq: _seq, ...values } = row;
        await toolStore.insert(trx, values);
        await ctx.audit(trx, actor, 'connector.tool_created', row.id, { instanceId, toolKey: input.toolKey });
      });
      return presentTool(row);
    },

    /**
     * Enables or disables a tool, raises or lowers its approval gate, sets its rate limit.
     * Any writer may enable, disable and raise the gate; lowering the gate and changing the
     * rate limit are owner/admin decisions (like deciding an approval). A gate set here is
     * kept by later syncs; a sync never touches the rate limit.
     */
    async update(actor: Actor, instanceId: string, toolId: string, patch: ToolSettingsPatch) {
      ctx.assertWriter(actor.ws);
      await ctx.requireInstance(actor.ws, instanceId);
      return inTransaction(db, async (trx) => {
        const tool = await toolStore.find(trx, instanceId, toolId);
        if (!tool) throw notFound('Tool');
        const lowersGate = patch.requiresApproval === false && toBool(tool.requires_approval);
        const changesRate = patch.rateLimitRpm !== undefined && patch.rateLimitRpm !== tool.rate_limit_rpm;
        if (lowersGate || changesRate) ctx.access.requireRole(actor.ws, OWNER_OR_ADMIN);
        const changes: Parameters<typeof toolStore.update>[2] = {
          is_active: (patch.enabled ?? toBool(tool.is_active)) ? 1 : 0,
          updated_at: clock.now().toISOString(),
        };
        if (patch.requiresApproval !== undefined) {
          changes.requires_approval = patch.requiresApproval ? 1 : 0;
          changes.requires_approval_set_by = actor.principal.userId;
        }
        if (patch.rateLimitRpm !== undefined) changes.rate_limit_rpm = patch.rateLimitRpm;
        await toolStore.update(trx, toolId, changes);
        await ctx.audit(trx, actor, 'connector.tool_toggled', toolId, { instanceId, ...patch });
        const after = { ...tool, ...changes };
        return {
          id: toolId,
          isActive: toBool(after.is_active),
          requiresApproval: toBool(after.requires_approval),
          rateLimitRpm: after.rate_limit_rpm,
        };
      });
    },
  };
}
