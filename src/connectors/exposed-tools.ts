import { LRUCache } from 'lru-cache';
import type { WorkspaceContext } from '../accounts/access.js';
import { WORKSPACE_DELETED_TOPIC } from '../accounts/service.js';
import type { ConnectorsContext } from './context.js';
import { canRunTools, isRunnable } from './invoke.js';
import { presentExposedTool } from './presenters.js';
import { instanceStore, toolStore } from './store/index.js';
import type { InstanceRow, ToolRow } from './tables.js';
import { exposedNames, toolPrefixOf } from './tool-names.js';
import { TOOLS_CHANGED_TOPIC } from './types.js';

type ExposedTool = ReturnType<typeof presentExposedTool>;

/** Workspaces whose catalog a process keeps (the least recently used goes first). */
const CATALOGS_MAX = 1_000;

/** A workspace's tools as MCP serves them, built once per change (docs/mcp.md, Performance). */
interface Catalog {
  /** Sorted by name; shared by every caller, so frozen. */
  tools: readonly ExposedTool[];
  byName: Map<string, ExposedTool>;
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
    const names = exposedNames(
      runnable.map(({ tool, instance }) => ({
        instanceId: instance.id,
        toolKey: tool.tool_key,
        prefix: toolPrefixOf(instance),
      })),
    );
    const tools = runnable
      .map(({ tool }, i) => presentExposedTool(tool, names[i]))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      tools: Object.freeze(tools),
      byName: new Map(tools.map((t) => [t.name, t])),
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

    /** The tool an MCP `tools/call` names, or null when the workspace serves none by that name. */
    async findExposed(ws: WorkspaceContext, name: string): Promise<ExposedTool | null> {
      return (await catalog(ws.workspaceId)).byName.get(name) ?? null;
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
