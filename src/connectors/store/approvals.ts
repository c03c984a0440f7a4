import type { Executor } from '../../db/tx.js';
import type { ApprovalRow } from '../tables.js';

/** Every SQL statement over connector_tool_approvals. */
export const approvalStore = {
  insert: (ex: Executor, row: Omit<ApprovalRow, 'seq'>) =>
    ex.insertInto('connector_tool_approvals').values(row).execute(),
  find: (ex: Executor, workspaceId: string, id: string) =>
    ex
      .selectFrom('connector_tool_approvals')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst(),
  findById: (ex: Executor, id: string) =>
    ex.selectFrom('connector_tool_approvals').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),

  /** The newest 100 of a workspace, each with its tool's input schema (null once the tool is gone). */
  list(ex: Executor, workspaceId: string, status?: string) {
    let query = ex
      .selectFrom('connector_tool_approvals')
      .leftJoin('connector_tools', 'connector_tools.id', 'connector_tool_approvals.tool_id')
      .selectAll('connector_tool_approvals')
      .select('connector_tools.input_schema')
      .where('connector_tool_approvals.workspace_id', '=', workspaceId)
      .orderBy('connector_tool_approvals.seq', 'desc')
      .limit(100);
    if (status) query = query.where('connector_tool_approvals.status', '=', status);
    return query.execute();
  },

  /** pending -> approved/rejected with a conditional update: true for exactly one decider. */
  async decide(
    ex: Executor,
    id: string,
    status: 'approved' | 'rejected',
    decidedBy: string,
    at: string,
  ): Promise<boolean> {
    const res = await ex
      .updateTable('connector_tool_approvals')
      .set({ status, decided_by: decidedBy, decided_at: at })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  saveResult: (ex: Executor, id: string, status: string, result: string) =>
    ex.updateTable('connector_tool_approvals').set({ status, result }).where('id', '=', id).execute(),
  deleteByInstance: (ex: Executor, instanceId: string) =>
    ex.deleteFrom('connector_tool_approvals').where('instance_id', '=', instanceId).execute(),
};
