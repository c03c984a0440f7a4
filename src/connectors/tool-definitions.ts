import { OWNER_OR_ADMIN } from '../accounts/roles.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { conflict, notFound } from '../http/errors.js';
import type { ConnectorsContext } from './context.js';
import { toolStore } from './store/index.js';
import type { InstanceRow, ToolRow } from './tables.js';
import type { Actor } from './types.js';

/**
 * Tool definitions are pinned (docs/connectors.md, Tool definitions): what an agent trusts a
 * tool by is its title, description, schemas and annotations (and the translations of the
 * first two). The first sync of a tool accepts what the server lists; a later sync that finds
 * something else keeps the accepted definition as the tool's truth and holds the new one for an
 * owner or admin to accept. Meanwhile the tool is withheld from MCP and its calls refused: a
 * server (or a url a member pointed the instance at) cannot rewrite what agents were told.
 */
const DEFINITION_COLUMNS = [
  'display_name',
  'description',
  'input_schema',
  'output_schema',
  'annotations',
  'translations',
] as const;
const JSON_COLUMNS = new Set(['input_schema', 'output_schema', 'annotations', 'translations']);
type DefinitionColumns = Pick<ToolRow, (typeof DEFINITION_COLUMNS)[number]>;

/** Changes listed for one held definition, and how much of a value each shows. */
const CHANGES_MAX = 50;
const VALUE_MAX_CHARS = 500;

/** JSON with object keys sorted: the same definition sent in another key order is no change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}

/** A definition's columns as values (the JSON ones parsed), under the API's names. */
function definitionValues(d: DefinitionColumns) {
  return {
    title: d.display_name,
    description: d.description,
    inputSchema: JSON.parse(d.input_schema) as unknown,
    outputSchema: JSON.parse(d.output_schema) as unknown,
    annotations: d.annotations === null ? null : (JSON.parse(d.annotations) as unknown),
    translations: JSON.parse(d.translations) as unknown,
  };
}

/** Equal texts first (a server lists the same JSON the same way), else JSON with keys sorted. */
const sameDefinition = (a: DefinitionColumns, b: DefinitionColumns) =>
  DEFINITION_COLUMNS.every(
    (c) =>
      a[c] === b[c] ||
      (JSON_COLUMNS.has(c) && canonical(JSON.parse(a[c] ?? 'null')) === canonical(JSON.parse(b[c] ?? 'null'))),
  );

const pick = (row: DefinitionColumns): DefinitionColumns =>
  Object.fromEntries(DEFINITION_COLUMNS.map((c) => [c, row[c]])) as DefinitionColumns;

const clip = (value: unknown): unknown => {
  if (value === undefined) return null;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length <= VALUE_MAX_CHARS) return value;
  return `${text.slice(0, VALUE_MAX_CHARS)}… (${text.length} characters)`;
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What differs, as paths (`inputSchema.properties.q.description`) with the values before and after. */
function changesBetween(before: unknown, after: unknown, path: string, out: Array<Record<string, unknown>>) {
  if (out.length >= CHANGES_MAX) return;
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) changesBetween(before[key], after[key], path ? `${path}.${key}` : key, out);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++)
      changesBetween(before[i], after[i], `${path}.${i}`, out);
    return;
  }
  if (canonical(before ?? null) !== canonical(after ?? null))
    out.push({ path, before: clip(before), after: clip(after) });
}

/** A tool's held definition as tool items carry it (`pendingDefinition`), or null. */
export function presentPendingDefinition(row: ToolRow) {
  if (row.pending_definition === null) return null;
  const pending = definitionValues(JSON.parse(row.pending_definition) as DefinitionColumns);
  const changes: Array<Record<string, unknown>> = [];
  changesBetween(definitionValues(row), pending, '', changes);
  const { translations: _translations, ...shown } = pending;
  return { ...shown, detectedAt: row.pending_detected_at, changes };
}

/** Tool definitions: what a sync does with the ones it finds, and an owner's or admin's acceptance. */
export function createToolDefinitions(ctx: ConnectorsContext) {
  const { db, clock } = ctx.kernel;

  return {
    /**
     * Writes what a sync found (inside its transaction), against the tools the instance has:
     * new tools are accepted as listed; a tool whose definition differs from its accepted one
     * holds the new one (`pending_definition`; detectedAt kept while it stays the same); a tool
     * back to its accepted definition holds none. A gate a server raises (destructiveHint) goes
     * up at once, as before; no definition lowers it. Returns what changed, for the audit.
     */
    async applySync(trx: Executor, instance: InstanceRow, found: Array<Omit<ToolRow, 'seq'>>, now: string) {
      const existing = new Map((await toolStore.list(trx, instance.id)).map((t) => [t.tool_key, t]));
      const added: Array<Omit<ToolRow, 'seq'>> = [];
      const changed: string[] = [];
      let restored = 0;
      for (const row of found) {
        const tool = existing.get(row.tool_key);
        if (!tool) {
          added.push(row);
          continue;
        }
        const raise =
          tool.requires_approval_set_by === null && row.requires_approval > tool.requires_approval
            ? { requires_approval: row.requires_approval }
            : {};
        if (sameDefinition(tool, row)) {
          if (tool.pending_definition !== null) restored++;
          if (tool.pending_definition !== null || 'requires_approval' in raise)
            await toolStore.updateSynced(trx, tool.id, {
              pending_definition: null,
              pending_detected_at: null,
              ...raise,
              updated_at: now,
            });
          continue;
        }
        const held = tool.pending_definition !== null && sameDefinition(JSON.parse(tool.pending_definition), row);
        if (!held) changed.push(row.tool_key);
        if (!held || 'requires_approval' in raise)
          await toolStore.updateSynced(trx, tool.id, {
            ...(held ? {} : { pending_definition: JSON.stringify(pick(row)), pending_detected_at: now }),
            ...raise,
            updated_at: now,
          });
      }
      await toolStore.insertMany(trx, added);
      const removed = await toolStore.deactivateMissing(
        trx,
        instance.id,
        found.map((r) => r.tool_key),
        now,
      );
      return { added: added.length, changed, restored, removed };
    },

    /** Tells the account's owners and admins that definitions wait for them (in the sync's transaction). */
    async notifyChanged(trx: Executor, approvers: string[], instance: InstanceRow, changed: string[]) {
      const shown = changed.slice(0, 5).join(', ') + (changed.length > 5 ? ` and ${changed.length - 5} more` : '');
      for (const userId of approvers)
        await ctx.notifications.notify(trx, {
          userId,
          title: `Tool definitions changed: ${instance.display_name}`.slice(0, 200),
          body:
            `The server of ${instance.display_name} now describes ${changed.length === 1 ? 'a tool' : `${changed.length} tools`} ` +
            `differently (${shown}). Until an owner or admin accepts the new definition, agents are not offered ` +
            `${changed.length === 1 ? 'it' : 'them'} and calls are refused.`,
          category: 'connector_tool_definition',
          priority: 'high',
          actionUrl: null,
        });
    },

    /**
     * POST .../tools/:toolId/accept-definition (owner/admin): the held definition becomes the
     * tool's. With `detectedAt`, only if it is still the held one the caller reviewed (409 if a
     * sync replaced it meanwhile).
     */
    async accept(actor: Actor, instanceId: string, toolId: string, expected: { detectedAt?: string } = {}) {
      ctx.assertWriter(actor.ws);
      ctx.access.requireRole(actor.ws, OWNER_OR_ADMIN);
      await ctx.requireInstance(actor.ws, instanceId);
      return inTransaction(db, async (trx) => {
        const tool = await toolStore.find(trx, instanceId, toolId);
        if (!tool) throw notFound('Tool');
        if (tool.pending_definition === null || tool.pending_detected_at === null)
          throw conflict('This tool has no changed definition to accept');
        if (expected.detectedAt !== undefined && expected.detectedAt !== tool.pending_detected_at)
          throw conflict(
            'The changed definition is not the one you reviewed: a later sync replaced it. Review it again',
          );
        const pending = JSON.parse(tool.pending_definition) as DefinitionColumns;
        const { changes } = presentPendingDefinition(tool)!;
        const now = clock.now().toISOString();
        if (!(await toolStore.acceptPending(trx, tool.id, tool.pending_detected_at, pick(pending), now)))
          throw conflict(
            'The changed definition is not the one you reviewed: a later sync replaced it. Review it again',
          );
        await ctx.audit(trx, actor, 'connector.tool_definition_accepted', tool.id, {
          instanceId,
          toolKey: tool.tool_key,
          detectedAt: tool.pending_detected_at,
          changedPaths: changes.map((c) => c.path),
        });
        return { ...tool, ...pick(pending), pending_definition: null, pending_detected_at: null, updated_at: now };
      });
    },
  };
}
