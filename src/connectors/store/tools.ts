import { sql } from 'kysely';
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

  /**
   * Upserts discovered tools by toolKey (in chunks) and deactivates the auto-discovered tools
   * of the instance not among them. Run it inside one transaction.
   */
  async upsertDiscovered(
    ex: Executor,
    instanceId: string,
    rows: Array<Omit<ToolRow, 'seq'>>,
    now: string,
  ): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await ex
        .insertInto('connector_tools')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .onConflict((oc) =>
          oc.columns(['instance_id', 'tool_key']).doUpdateSet((eb) => ({
            display_name: eb.ref('excluded.display_name'),
            description: eb.ref('excluded.description'),
            input_schema: eb.ref('excluded.input_schema'),
            output_schema: eb.ref('excluded.output_schema'),
            // A sync only ever raises the flag: the server at the url (which a member may
            // have set) must not lift an approval gate; only an owner/admin lowers it. Once a
            // person set the flag, the sync keeps their choice either way.
            // The larger of the two, spelled as a case: max(a, b) is SQLite only.
            requires_approval: sql<number>`case when connector_tools.requires_approval_set_by is not null
              then connector_tools.requires_approval
              when excluded.requires_approval > connector_tools.requires_approval then excluded.requires_approval
              else connector_tools.requires_approval end`,
            annotations: eb.ref('excluded.annotations'),
            translations: eb.ref('excluded.translations'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
    }
    const keys = rows.map((r) => r.tool_key);
    let gone = ex
      .updateTable('connector_tools')
      .set({ is_active: 0, updated_at: now })
      .where('instance_id', '=', instanceId)
      .where('source', '=', 'auto_discovered')
      .where('is_active', '=', 1);
    if (keys.length > 0) gone = gone.where('tool_key', 'not in', keys);
    await gone.execute();
  },
};
