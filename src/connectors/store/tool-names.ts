import type { Executor } from '../../db/tx.js';

/** Every SQL statement over connector_tool_names (docs/connectors.md, Tool names). */
export const toolNameStore = {
  listByWorkspace: (ex: Executor, workspaceId: string) =>
    ex
      .selectFrom('connector_tool_names')
      .select(['name_key', 'instance_id', 'tool_key'])
      .where('workspace_id', '=', workspaceId)
      .execute(),
  /** Binds a name to a tool unless it is bound already (to it, or, after a race, to another). */
  bind: (
    ex: Executor,
    row: { workspace_id: string; name_key: string; instance_id: string; tool_key: string; bound_at: string },
  ) =>
    ex
      .insertInto('connector_tool_names')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'name_key']).doNothing())
      .execute(),
  /** Frees every name bound to an instance; how many were. */
  async releaseByInstance(ex: Executor, instanceId: string): Promise<number> {
    const result = await ex.deleteFrom('connector_tool_names').where('instance_id', '=', instanceId).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
