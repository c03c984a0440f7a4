import { sql } from 'kysely';
import type { Kernel } from '../kernel.js';
import type { AccountAccess, WorkspaceContext } from '../accounts/access.js';
import type { AuditAction } from '../audit/record.js';
import { inTransaction, toBool, type Executor } from '../db/tx.js';
import { DomainError, conflict, notFound } from '../http/errors.js';
import { rateLimitHeaders } from '../http/rate-limit.js';
import { newId } from '../lib/ids.js';
import { sha256Hex } from '../lib/crypto.js';
import { open, seal } from '../lib/sealed.js';
import { OWNER_OR_ADMIN } from '../accounts/roles.js';
import type { Definitions } from './definitions.js';
import type { Actor } from './service.js';
import type { ApprovalRow, InstanceRow, ToolRow } from './tables.js';
import { presentApproval, presentTool } from './presenters.js';
import { approvalInputView } from './approval-input.js';
import { originOf } from './credentials.js';
import { approvalInputContext } from './sealing.js';
import { toolStore } from './store.js';
import { callMcpTool, closeMcp, listAllTools, openMcp, type McpTarget, type McpToolDefinition } from './mcp.js';

export interface ToolsDeps {
  definitions: Definitions;
  access: AccountAccess;
  requireInstance(ws: WorkspaceContext, id: string, ex?: Executor): Promise<InstanceRow>;
  assertWriter(ws: WorkspaceContext): void;
  audit(ex: Executor, actor: Actor, action: AuditAction, targetId: string, metadata?: Record<string, unknown>): Promise<void>;
  mcpTarget(instance: InstanceRow): Promise<McpTarget>;
}

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

const TRANSLATIONS_META = 'gantry/translations';
const INSERT_CHUNK = 100;
const upstream = (message: string) => new DomainError(502, 'UPSTREAM_FAILED', message);

/** What an approval is bound to: the instance's config as it was when the call was asked. */
const configDigest = (instance: InstanceRow) => sha256Hex(instance.config);

/** Tools of an instance: list, MCP sync, manual tools, enablement, invocation and approvals. */
/** Disabled instances and disabled tools are never executed (spec: Tool enablement). */
function assertRunnable(instance: { enabled: number }, tool: { is_active: number }): void {
  if (!toBool(instance.enabled)) throw conflict('The connector instance is disabled');
  if (!toBool(tool.is_active)) throw conflict('The tool is disabled');
}

export function createToolsService(kernel: Kernel, deps: ToolsDeps) {
  const { db, clock, secrets, limiter } = kernel;

  /** The approvers (owner/admin) and the requester see the input they decide or asked for. */
  function approvalView(actor: Actor, row: ApprovalRow, inputSchema: string | null) {
    if (!OWNER_OR_ADMIN.includes(actor.ws.role) && row.requested_by !== actor.principal.userId) return presentApproval(row);
    const input = JSON.parse(open(secrets, row.input_sealed, approvalInputContext(row.id))) as unknown;
    return presentApproval(row, approvalInputView(inputSchema ? (JSON.parse(inputSchema) as unknown) : undefined, input));
  }

  async function execute(instance: InstanceRow, tool: ToolRow, input: Record<string, unknown>) {
    const def = await deps.definitions.get(instance.connector_key, instance.workspace_id);
    if (!def || def.adapter !== 'mcp') throw conflict('This connector has no adapter that can run tools');
    let session;
    try {
      session = await openMcp(await deps.mcpTarget(instance));
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw upstream(`The MCP server could not be reached: ${(err as Error).message}`.slice(0, 300));
    }
    try {
      return await callMcpTool(session, tool.tool_key, input);
    } catch (err) {
      throw upstream(`The MCP server failed the call: ${(err as Error).message}`.slice(0, 300));
    } finally {
      await closeMcp(session);
    }
  }

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
      rate_limit_rpm: null,
      is_active: 1,
      source: 'auto_discovered',
      translations: JSON.stringify(translations),
      created_at: now,
      updated_at: now,
    };
  }

  return {
    async list(ws: WorkspaceContext, instanceId: string, locale?: string) {
      await deps.requireInstance(ws, instanceId);
      return (await toolStore.list(db, instanceId)).map((t) => presentTool(t, locale));
    },

    /**
     * Pulls the adapter's tools (MCP tools/list, walked page by page outside any transaction)
     * and upserts them by toolKey in one transaction; auto-discovered tools the server no
     * longer lists are deactivated. A server failing mid-sync changes nothing.
     */
    async sync(actor: Actor, instanceId: string) {
      deps.assertWriter(actor.ws);
      const instance = await deps.requireInstance(actor.ws, instanceId);
      const def = await deps.definitions.require(instance.connector_key, actor.ws.workspaceId);
      if (def.adapter === 'mcp') {
        let discovered: McpToolDefinition[];
        try {
          const session = await openMcp(await deps.mcpTarget(instance));
          try {
            discovered = (await listAllTools(session)).tools;
          } finally {
            await closeMcp(session);
          }
        } catch (err) {
          if (err instanceof DomainError) throw err;
          throw upstream(`Tool sync failed: ${(err as Error).message}`.slice(0, 300));
        }
        const now = clock.now().toISOString();
        const unique = new Map(discovered.filter((t) => typeof t?.name === 'string' && t.name.length > 0).map((t) => [t.name, t]));
        const rows = [...unique.values()].map((t) => toRow(instance, t, now));
        await inTransaction(db, async (trx) => {
          for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
            await trx
              .insertInto('connector_tools')
              .values(rows.slice(i, i + INSERT_CHUNK))
              .onConflict((oc) =>
                oc.columns(['instance_id', 'tool_key']).doUpdateSet((eb) => ({
                  display_name: eb.ref('excluded.display_name'),
                  description: eb.ref('excluded.description'),
                  input_schema: eb.ref('excluded.input_schema'),
                  output_schema: eb.ref('excluded.output_schema'),
                  // A sync only ever raises the flag: the server at the url (which a member may
                  // have set) must not lift an approval gate; only an owner/admin lowers it.
                  requires_approval: sql<number>`max(connector_tools.requires_approval, excluded.requires_approval)`,
                  translations: eb.ref('excluded.translations'),
                  updated_at: eb.ref('excluded.updated_at'),
                })),
              )
              .execute();
          }
          let gone = trx.updateTable('connector_tools').set({ is_active: 0, updated_at: now }).where('instance_id', '=', instanceId).where('source', '=', 'auto_discovered').where('is_active', '=', 1);
          if (unique.size > 0) gone = gone.where('tool_key', 'not in', [...unique.keys()]);
          await gone.execute();
        });
      }
      return (await toolStore.list(db, instanceId)).map((t) => presentTool(t));
    },

    /** Manual tools, only on custom (non-system) connectors; both schemas must be JSON Schema. */
    async createManual(actor: Actor, instanceId: string, input: ManualToolInput) {
      deps.assertWriter(actor.ws);
      const instance = await deps.requireInstance(actor.ws, instanceId);
      const def = await deps.definitions.require(instance.connector_key, actor.ws.workspaceId);
      if (def.isSystem) throw conflict('Manual tools can only be added to custom connectors');
      deps.definitions.assertJsonSchema(input.inputSchema, 'inputSchema');
      deps.definitions.assertJsonSchema(input.outputSchema, 'outputSchema');
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
        rate_limit_rpm: input.rateLimitRpm ?? null,
        is_active: 1,
        source: 'manual',
        translations: JSON.stringify(input.translations ?? {}),
        created_at: now,
        updated_at: now,
      };
      await inTransaction(db, async (trx) => {
        const clash = await trx.selectFrom('connector_tools').select('id').where('instance_id', '=', instanceId).where('tool_key', '=', input.toolKey).executeTakeFirst();
        if (clash) throw conflict(`This instance already has a tool ${input.toolKey}`);
        const { seq: _seq, ...values } = row;
        await trx.insertInto('connector_tools').values(values).execute();
        await deps.audit(trx, actor, 'connector.tool_created', row.id, { instanceId, toolKey: input.toolKey });
      });
      return presentTool(row);
    },

    /**
     * Enables or disables a tool, and raises or lowers its approval gate. Any writer may raise
     * the gate; lowering it is an owner/admin decision (like deciding an approval).
     */
    async update(actor: Actor, instanceId: string, toolId: string, patch: { enabled?: boolean; requiresApproval?: boolean }) {
      deps.assertWriter(actor.ws);
      await deps.requireInstance(actor.ws, instanceId);
      return inTransaction(db, async (trx) => {
        const tool = await toolStore.find(trx, instanceId, toolId);
        if (!tool) throw notFound('Tool');
        if (patch.requiresApproval === false && toBool(tool.requires_approval)) deps.access.requireRole(actor.ws, OWNER_OR_ADMIN);
        const enabled = patch.enabled ?? toBool(tool.is_active);
        const changes: { is_active: number; updated_at: string; requires_approval?: number } = { is_active: enabled ? 1 : 0, updated_at: clock.now().toISOString() };
        if (patch.requiresApproval !== undefined) changes.requires_approval = patch.requiresApproval ? 1 : 0;
        await trx.updateTable('connector_tools').set(changes).where('id', '=', toolId).execute();
        await deps.audit(trx, actor, 'connector.tool_toggled', toolId, { instanceId, ...patch });
        return { id: toolId, isActive: enabled, ...(patch.requiresApproval !== undefined ? { requiresApproval: patch.requiresApproval } : {}) };
      });
    },

    /**
     * Runs a tool: input validated against its inputSchema, disabled tools and instances
     * refused, rateLimitRpm enforced per tool, approval-gated tools parked as a pending
     * approval (202) for an owner/admin.
     */
    async invoke(actor: Actor, instanceId: string, toolId: string, input: Record<string, unknown>) {
      deps.assertWriter(actor.ws);
      const instance = await deps.requireInstance(actor.ws, instanceId);
      const tool = await toolStore.find(db, instanceId, toolId);
      if (!tool) throw notFound('Tool');
      assertRunnable(instance, tool);
      deps.definitions.assertValid(JSON.parse(tool.input_schema) as Record<string, unknown>, input, 'input', 'input');
      if (tool.rate_limit_rpm !== null) {
        const decision = limiter.hit(`connector-tool:${tool.id}`, { limit: tool.rate_limit_rpm, windowSec: 60 });
        if (!decision.allowed) throw new DomainError(429, 'RATE_LIMIT_EXCEEDED', `This tool allows ${tool.rate_limit_rpm} calls per minute`, undefined, rateLimitHeaders(decision, clock.now().getTime()));
      }
      if (toBool(tool.requires_approval)) {
        const id = newId();
        const def = await deps.definitions.get(instance.connector_key, instance.workspace_id);
        const targetOrigin = def?.adapter === 'mcp' ? originOf((JSON.parse(instance.config) as { url?: unknown }).url) : null;
        const row = { id, workspace_id: actor.ws.workspaceId, instance_id: instanceId, tool_id: toolId, input_sealed: seal(secrets, JSON.stringify(input), approvalInputContext(id)), status: 'pending', requested_by: actor.principal.userId, decided_by: null, decided_at: null, result: null, target_origin: targetOrigin, target_digest: configDigest(instance), created_at: clock.now().toISOString() };
        await db.insertInto('connector_tool_approvals').values(row).execute();
        return { status: 202, body: { status: 'pending_approval', approval: approvalView(actor, { ...row, seq: 0 }, tool.input_schema), result: null } };
      }
      const result = await execute(instance, tool, input);
      return { status: 200, body: { status: 'completed', approval: null, result } };
    },

    async listApprovals(actor: Actor, status?: string) {
      let query = db
        .selectFrom('connector_tool_approvals')
        .leftJoin('connector_tools', 'connector_tools.id', 'connector_tool_approvals.tool_id')
        .selectAll('connector_tool_approvals')
        .select('connector_tools.input_schema')
        .where('connector_tool_approvals.workspace_id', '=', actor.ws.workspaceId)
        .orderBy('connector_tool_approvals.seq', 'desc')
        .limit(100);
      if (status) query = query.where('connector_tool_approvals.status', '=', status);
      return (await query.execute()).map(({ input_schema, ...row }) => approvalView(actor, row, input_schema));
    },

    /**
     * An owner/admin decides a pending approval. Approve claims it (pending -> approved with
     * a conditional update, so it runs once), then runs the call and stores the result.
     */
    async decide(actor: Actor, approvalId: string, decision: 'approve' | 'reject') {
      deps.access.assertWritable(actor.ws);
      deps.access.requireRole(actor.ws, OWNER_OR_ADMIN);
      const now = clock.now().toISOString();
      const approval = await db.selectFrom('connector_tool_approvals').selectAll().where('id', '=', approvalId).where('workspace_id', '=', actor.ws.workspaceId).executeTakeFirst();
      if (!approval) throw notFound('Approval');
      const claimed = await inTransaction(db, async (trx) => {
        const res = await trx
          .updateTable('connector_tool_approvals')
          .set({ status: decision === 'approve' ? 'approved' : 'rejected', decided_by: actor.principal.userId, decided_at: now })
          .where('id', '=', approvalId)
          .where('status', '=', 'pending')
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) !== 1) return false;
        await deps.audit(trx, actor, 'connector.tool_approval_decided', approvalId, { decision, toolId: approval.tool_id });
        return true;
      });
      if (!claimed) throw conflict('This approval was already decided');
      if (decision === 'approve') {
        const instance = await deps.requireInstance(actor.ws, approval.instance_id);
        const tool = await toolStore.find(db, approval.instance_id, approval.tool_id);
        let result: unknown;
        let status = 'approved';
        try {
          if (!tool) throw notFound('Tool');
          // Disabled since the request was parked: disabled tools never run (spec, Tool enablement).
          assertRunnable(instance, tool);
          // The approver approved a call against the instance as it was when asked (its origin
          // is shown); if the url, headers or anything else of the config changed since, the
          // call does not run.
          if (approval.target_digest === null || approval.target_digest !== configDigest(instance)) {
            throw conflict(`The connector instance changed since this call was asked${approval.target_origin ? ` against ${approval.target_origin}` : ''}; it did not run: ask for it again`);
          }
          result = await execute(instance, tool, JSON.parse(open(secrets, approval.input_sealed, approvalInputContext(approvalId))) as Record<string, unknown>);
        } catch (err) {
          status = 'failed';
          result = { error: (err as Error).message };
        }
        await db.updateTable('connector_tool_approvals').set({ status, result: JSON.stringify(result) }).where('id', '=', approvalId).execute();
      }
      const decided = await db.selectFrom('connector_tool_approvals').selectAll().where('id', '=', approvalId).executeTakeFirstOrThrow();
      const tool = await toolStore.find(db, decided.instance_id, decided.tool_id);
      return approvalView(actor, decided, tool?.input_schema ?? null);
    },
  };
}
