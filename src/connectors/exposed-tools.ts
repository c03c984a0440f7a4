import { LRUCache } from 'lru-cache';
import type { WorkspaceContext } from '../accounts/access.js';
import { WORKSPACE_DELETED_TOPIC } from '../accounts/service.js';
import type { ConnectorsContext } from './context.js';
import { canRunTools, isRunnable } from './runnable.js';
import { presentExposedTool } from './presenters.js';
import { instanceStore, toolNameStore, toolStore } from './store/index.js';
import type { InstanceRow, ToolRow } from './tables.js';
import { exposedNames, nameOwner, toolPrefixOf } from './tool-names.js';
import { TOOLS_CHANGED_TOPIC } from './types.js';

type ExposedTool = ReturnType<typeof presentExposedTool>;

/** Workspaces whose catalog a process keeps (the least recently used goes first). */
const CATALOGS_MAX = 1_000;

/** A workspace's tools as MCP serves them, built once per change (docs/mcp.md, Performance). */
interface Catalog {
  /** Sorted by name, without the tools whose definition waits for review; shared by every caller, so frozen. */
  tools: readonly ExposedTool[];
  /** Every tool with a name, those waiting for review included: a call to one is refused, not unknown. */
  byName: Map<string, ExposedTool>;
  /** Names agents have called (lower case): bound to their tool (docs/connectors.md, Tool names). */
  bound: Set<string>;
  /** The rows each tool was built from, by tool id: what invoke would read for it now. */
  rows: Map<string, { instance: InstanceRow; tool: ToolRow }>;
}

/**
 * The tools a workspace serves over MCP (docs/connectors.md, Tools over MCP): every tool that
 * could run now (isRunnable, as the REST invoke decides) of every active instance whose
 * definition runs tools, under its exposed name, sorted by that name.
 *
 * Built from SQL once and kept per workspace until something that can change it publishes
 * TOOLS_CHANGED_TOPIC for the workspace (or with no key, for all), or the workspace is
 * deleted (WORKSPACE_DELETED_TOPIC, its instances go by cascade): in this process at once,
 * inside the writer's transaction; another process's commits are caught up on before each
 * read (ChangeFeed.catchUp), so no read serves what any process has already changed.
 */
export function createExposedTools(ctx: ConnectorsContext) {
  const { db, changes } = ctx.kernel;
  // The promise is kept from the start, so concurrent readers share one build; a change drops
  // it, and a build that a change overtook is never put back (its readers raced the write).
  const catalogs = new LRUCache<string, Promise<Catalog>>({ max: CATALOGS_MAX });
  changes.subscribe(TOOLS_CHANGED_TOPIC, (key) => (key ? catalogs.delete(key) : catalogs.clear()));
  changes.subscribe(WORKSPACE_DELETED_TOPIC, (key) => (key ? catalogs.delete(key) : catalogs.clear()));

  async function build(workspaceId: string): Promise<Catalog> {
    const definitions = await ctx.definitions.list(workspaceId);
    const running = new Set(definitions.filter(canRunTools).map((d) => d.key));
    const instances = new Map(
      (await instanceStore.listByWorkspace(db, workspaceId))
        .filter((i) => i.status === 'active' && running.has(i.connector_key))
        .map((i) => [i.id, i]),
    );
    const runnable = (await toolStore.listByWorkspace(db, workspaceId)).flatMap((tool) => {
      const instance = instances.get(tool.instance_id);
      return instance && isRunnable(instance, tool) ? [{ tool, instance }] : [];
    });
    const bindings = await toolNameStore.listByWorkspace(db, workspaceId);
    const bound = new Map(
      bindings.map((b) => [b.name_key, nameOwner({ instanceId: b.instance_id, toolKey: b.tool_key })]),
    );
    const names = exposedNames(
      runnable.map(({ tool, instance }) => ({
        instanceId: instance.id,
        toolKey: tool.tool_key,
        prefix: toolPrefixOf(instance),
      })),
      bound,
    );
    const named = runnable
      .map(({ tool }, i) => ({ tool: presentExposedTool(tool, names[i]), held: tool.pending_definition !== null }))
      .sort((a, b) => (a.tool.name < b.tool.name ? -1 : a.tool.name > b.tool.name ? 1 : 0));
    return {
      // A changed definition is not served until an owner or admin accepts it (tool-definitions.ts).
      tools: Object.freeze(named.filter((t) => !t.held).map((t) => t.tool)),
      byName: new Map(named.map((t) => [t.tool.name, t.tool])),
      bound: new Set(bound.keys()),
      rows: new Map(runnable.map((r) => [r.tool.id, r])),
    };
  }

  async function catalog(workspaceId: string): Promise<Catalog> {
    await changes.catchUp();
    let entry = catalogs.get(workspaceId);
    if (!entry) {
      const built = build(workspaceId);
      entry = built;
      catalogs.set(workspaceId, built);
      built.catch(() => {
        if (catalogs.get(workspaceId) === built) catalogs.delete(workspaceId);
      });
    }
    return entry;
  }

  return {
    /** The workspace's exposed tools, sorted by name (one shared, frozen list). */
    async listExposed(ws: WorkspaceContext): Promise<readonly ExposedTool[]> {
      return (await catalog(ws.workspaceId)).tools;
    },

    /** Calls back with a workspace id whenever its exposed tools may have changed (in any process). */
    onToolsChanged(listener: (workspaceId: string) => void): () => void {
      return changes.subscribe(TOOLS_CHANGED_TOPIC, (key) => {
        if (key) listener(key);
      });
    },

    /**
     * The tool an MCP `tools/call` names, or null when the workspace serves none by that name
     * (`retired`: an agent called a tool by it once, and that tool was renamed or removed).
     */
    async findExposed(ws: WorkspaceContext, name: string): Promise<{ tool: ExposedTool | null; retired: boolean }> {
      const found = await catalog(ws.workspaceId);
      const tool = found.byName.get(name) ?? null;
      return { tool, retired: tool === null && found.bound.has(name.toLowerCase()) };
    },

    /**
     * Binds a called name to its tool for good (docs/connectors.md, Tool names): the first call
     * by a name writes it, later ones find it in the catalog and write nothing.
     */
    async bindCalledName(ws: WorkspaceContext, tool: ExposedTool): Promise<void> {
      const found = await catalog(ws.workspaceId);
      const key = tool.name.toLowerCase();
      if (found.bound.has(key)) return;
      await toolNameStore.bind(db, {
        workspace_id: ws.workspaceId,
        name_key: key,
        instance_id: tool.instanceId,
        tool_key: tool.toolKey,
        bound_at: ctx.kernel.clock.now().toISOString(),
      });
      found.bound.add(key);
    },

    /**
     * The instance and tool rows of a tool the workspace serves now, as SQL would return them;
     * null when it serves no such tool (the caller then reads SQL and says why).
     */
    async runnableRows(workspaceId: string, instanceId: string, toolId: string) {
      const rows = (await catalog(workspaceId)).rows.get(toolId);
      return rows && rows.instance.id === instanceId ? rows : null;
    },
  };
}

export type ExposedTools = ReturnType<typeof createExposedTools>;
