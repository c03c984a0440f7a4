import type { Executor } from '../../db/tx.js';
import type { ConnectorInstancesTable } from '../tables.js';

/** Every SQL statement over connector_instances. */
export const instanceStore = {
  find: (ex: Executor, workspaceId: string, id: string) =>
    ex
      .selectFrom('connector_instances')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst(),
  listByWorkspace: (ex: Executor, workspaceId: string) =>
    ex.selectFrom('connector_instances').selectAll().where('workspace_id', '=', workspaceId).execute(),
  findById: (ex: Executor, id: string) =>
    ex.selectFrom('connector_instances').selectAll().where('id', '=', id).executeTakeFirst(),
  async page(ex: Executor, workspaceId: string, limit: number, offset: number) {
    const [rows, count] = await Promise.all([
      ex
        .selectFrom('connector_instances')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .orderBy('seq')
        .limit(limit)
        .offset(offset)
        .execute(),
      ex
        .selectFrom('connector_instances')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },
  insert: (ex: Executor, row: Omit<ConnectorInstancesTable, 'seq'>) =>
    ex.insertInto('connector_instances').values(row).execute(),
  update: (ex: Executor, id: string, patch: Partial<Omit<ConnectorInstancesTable, 'seq' | 'id'>>) =>
    ex.updateTable('connector_instances').set(patch).where('id', '=', id).execute(),
  delete: (ex: Executor, id: string) => ex.deleteFrom('connector_instances').where('id', '=', id).execute(),

  /** A successful OAuth link: pending_auth or error -> active; a disabled (inactive) instance stays so. */
  activateLinked: (ex: Executor, id: string, at: string) =>
    ex
      .updateTable('connector_instances')
      .set({ status: 'active', health_message: null, updated_at: at })
      .where('id', '=', id)
      .where('status', 'in', ['pending_auth', 'error'])
      .execute(),

  /** active -> error with a message; true when this call moved it (so the creator is told once). */
  async failIfActive(ex: Executor, id: string, message: string, at: string): Promise<boolean> {
    const moved = await ex
      .updateTable('connector_instances')
      .set({ status: 'error', health_message: message, updated_at: at })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  },
};
