import type { Executor } from '../../db/tx.js';
import type { ToolRow } from '../tables.js';

const INSERT_CHUNK = 100;

/** Every SQL statement over connector_tools. */
export const toolStore = {
  list: (ex: Executor, instanceId: string) =>
    ex.selectFrom('connector_tools').selectAll().where('instance_id', '=', instanceId).orderBy('seq').execute(),
  find: (ex: Executor, instanceId: string, id: string) =>
    ex
      .selectFrom('connector_tools')
      .selectAll()
      .where('instance_id', '=', instanceId)
      .where('id', '=', id)
      .executeTakeFirst(),
  findByKey: (ex: Executor, instanceId: string, toolKey: string) =>
    ex
      .selectFrom('connector_tools')
      .select('id')
      .where('instance_id', '=', instanceId)
      .where('tool_key', '=', toolKey)
      .executeTakeFirst(),
  /** Every tool of every instance of a workspace, active or not. */
  listByWorkspace: (ex: Executor, workspaceId: string) =>
    ex
      .selectFrom('connector_tools')
      .selectAll()
      .where('instance_id', 'in', (eb) =>
        eb.selectFrom('connector_instances').select('id').where('workspace_id', '=', workspaceId),
      )
      .execute(),
  insert: (ex: Executor, row: Omit<ToolRow, 'seq'>) => ex.insertInto('connector_tools').values(row).execute(),
  update: (
    ex: Executor,
    id: string,
    patch: Partial<Pick<ToolRow, 'requires_approval' | 'requires_approval_set_by' | 'rate_limit_rpm'>> &
      Pick<ToolRow, 'is_active' | 'updated_at'>,
  ) => ex.updateTable('connector_tools').set(patch).where('id', '=', id).execute(),
  /** Forgets who set the instance's gates (the values stay), so syncs may raise them again. */
  releaseApprovalChoices: (ex: Executor, instanceId: string) =>
    ex
      .updateTable('connector_tools')
      .set({ requires_approval_set_by: null })
      .where('instance_id', '=', instanceId)
      .where('source', '=', 'auto_discovered')
      .execute(),
  deleteByInstance: (ex: Executor, instanceId: string) =>
    ex.deleteFrom('connector_tools').where('instance_id', '=', instanceId).execute(),

  /** New tools of a sync, in chunks (one statement each). */
  async insertMany(ex: Executor, rows: Array<Omit<ToolRow, 'seq'>>): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK)
      await ex
        .insertInto('connector_tools')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
  },
  /**
   * What a sync changes on a tool it already had: a definition held for review (or none, when
   * the server is back to the accepted one), and the approval gate raised.
   */
  updateSynced: (
    ex: Executor,
    id: string,
    patch: Partial<Pick<ToolRow, 'pending_definition' | 'pending_detected_at' | 'requires_approval'>> &
      Pick<ToolRow, 'updated_at'>,
  ) => ex.updateTable('connector_tools').set(patch).where('id', '=', id).execute(),
  /** An owner's or admin's acceptance: the held definition becomes the tool's, if it is still the one they saw. */
  async acceptPending(
    ex: Executor,
    id: string,
    detectedAt: string,
    definition: Pick<
      ToolRow,
      'display_name' | 'description' | 'input_schema' | 'output_schema' | 'annotations' | 'translations'
    >,
    now: string,
  ): Promise<boolean> {
    const result = await ex
      .updateTable('connector_tools')
      .set({ ...definition, pending_definition: null, pending_detected_at: null, updated_at: now })
      .where('id', '=', id)
      .where('pending_detected_at', '=', detectedAt)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },
  /** Deactivates the auto-discovered tools of the instance a sync no longer found; how many. */
  async deactivateMissing(ex: Executor, instanceId: string, keys: string[], now: string): Promise<number> {
    let gone = ex
      .updateTable('connector_tools')
      .set({ is_active: 0, updated_at: now })
      .where('instance_id', '=', instanceId)
      .where('source', '=', 'auto_discovered')
      .where('is_active', '=', 1);
    if (keys.length > 0) gone = gone.where('tool_key', 'not in', keys);
    return Number((await gone.executeTakeFirst()).numUpdatedRows);
  },
};
