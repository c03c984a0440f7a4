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
  /** Any workspace's, by id alone: the approval page resolves the workspace from it. */
  lookup: (ex: Executor, id: string) =>
    ex.selectFrom('connector_tool_approvals').selectAll().where('id', '=', id).executeTakeFirst(),
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
      .where('mode', '=', 'park')
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /** What an MCP call's retry must match (approvals-mcp.ts): the newest unconsumed retry-mode row. */
  findBinding: (
    ex: Executor,
    b: Pick<
      ApprovalRow,
      'workspace_id' | 'requested_by' | 'client_id' | 'instance_id' | 'tool_id' | 'args_digest' | 'target_digest'
    >,
  ) =>
    ex
      .selectFrom('connector_tool_approvals')
      .selectAll()
      .where('workspace_id', '=', b.workspace_id)
      .where('requested_by', '=', b.requested_by)
      .where('client_id', '=', b.client_id)
      .where('instance_id', '=', b.instance_id)
      .where('tool_id', '=', b.tool_id)
      .where('args_digest', '=', b.args_digest)
      .where('target_digest', '=', b.target_digest)
      .where('mode', '=', 'retry')
      .where('consumed_at', 'is', null)
      .orderBy('seq', 'desc')
      .executeTakeFirst(),

  /**
   * A retry-mode decision: pending and unexpired -> approved/rejected, an approval then
   * usable until `usableUntil`. True for exactly one decider.
   */
  async decideRetry(
    ex: Executor,
    id: string,
    status: 'approved' | 'rejected',
    decidedBy: string,
    at: string,
    usableUntil: string,
  ): Promise<boolean> {
    const res = await ex
      .updateTable('connector_tool_approvals')
      .set({
        status,
        decided_by: decidedBy,
        decided_at: at,
        ...(status === 'approved' ? { expires_at: usableUntil } : {}),
      })
      .where('id', '=', id)
      .where('mode', '=', 'retry')
      .where('status', '=', 'pending')
      .where('expires_at', '>', at)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /**
   * Marks a retry-mode approval's one outcome as given: with `status` 'approved' only while
   * unexpired (the run), else whatever its status (a refusal). True for exactly one caller.
   */
  async consume(ex: Executor, id: string, at: string, status?: 'approved'): Promise<boolean> {
    let query = ex
      .updateTable('connector_tool_approvals')
      .set({ consumed_at: at })
      .where('id', '=', id)
      .where('mode', '=', 'retry')
      .where('consumed_at', 'is', null);
    if (status) query = query.where('status', '=', status).where('expires_at', '>', at);
    const res = await query.executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  saveResult: (ex: Executor, id: string, status: string, result: string) =>
    ex.updateTable('connector_tool_approvals').set({ status, result }).where('id', '=', id).execute(),
  deleteByInstance: (ex: Executor, instanceId: string) =>
    ex.deleteFrom('connector_tool_approvals').where('instance_id', '=', instanceId).execute(),
};
