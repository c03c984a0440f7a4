import type { WorkspaceContext } from '../accounts/access.js';
import type { ConnectorsContext } from './context.js';
import { canRunTools, isRunnable } from './invoke.js';
import { presentExposedTool } from './presenters.js';
import { instanceStore, toolStore } from './store/index.js';
import { exposedNames, toolPrefixOf } from './tool-names.js';
import { TOOLS_CHANGED_TOPIC } from './types.js';

type ExposedTool = ReturnType<typeof presentExposedTool>;

/**
 * The tools a workspace serves over MCP (docs/connectors.md, Tools over MCP): every tool that
 * could run now (isRunnable, as the REST invoke decides) of every active instance whose
 * definition runs tools, under its exposed name, sorted by that name.
 */
export function createExposedTools(ctx: ConnectorsContext) {
  const { db } = ctx.kernel;

  async function listExposed(ws: WorkspaceContext): Promise<ExposedTool[]> {
    const definitions = await ctx.definitions.list(ws.workspaceId);
    const running = new Set(definitions.filter(canRunTools).map((d) => d.key));
    const instances = new Map(
      (await instanceStore.listByWorkspace(db, ws.workspaceId))
        .filter((i) => i.status === 'active' && running.has(i.connector_key))
        .map((i) => [i.id, i]),
    );
    const tools = (await toolStore.listByWorkspace(db, ws.workspaceId)).flatMap((tool) => {
      const instance = instances.get(tool.instance_id);
      return instance && isRunnable(instance, tool) ? [{ tool, instance }] : [];
    });
    const names = exposedNames(
      tools.map(({ tool, instance }) => ({
        instanceId: instance.id,
        toolKey: tool.tool_key,
        prefix: toolPrefixOf(instance),
      })),
    );
    return tools
      .map(({ tool }, i) => presentExposedTool(tool, names[i]))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  return {
    listExposed,

    /** Calls back with a workspace id whenever its exposed tools may have changed (in any process). */
    onToolsChanged(listener: (workspaceId: string) => void): () => void {
      return ctx.kernel.changes.subscribe(TOOLS_CHANGED_TOPIC, (key) => {
        if (key) listener(key);
      });
    },

    /** The tool an MCP `tools/call` names, or null when the workspace serves none by that name. */
    async findExposed(ws: WorkspaceContext, name: string): Promise<ExposedTool | null> {
      return (await listExposed(ws)).find((t) => t.name === name) ?? null;
    },
  };
}
