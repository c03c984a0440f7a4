import type { Executor } from '../db/tx.js';
import type { ConnectorInstancesTable } from './tables.js';

/** Every SQL statement over the instances and credentials tables. */
export const instanceStore = {
  find: (ex: Executor, workspaceId: string, id: string) =>
    ex.selectFrom('connector_instances').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),
  findById: (ex: Executor, id: string) => ex.selectFrom('connector_instances').selectAll().where('id', '=', id).executeTakeFirst(),
  async page(ex: Executor, workspaceId: string, limit: number, offset: number) {
    const [rows, count] = await Promise.all([
      ex.selectFrom('connector_instances').selectAll().where('workspace_id', '=', workspaceId).orderBy('seq').limit(limit).offset(offset).execute(),
      ex.selectFrom('connector_instances').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },
  insert: (ex: Executor, row: Omit<ConnectorInstancesTable, 'seq'>) => ex.insertInto('connector_instances').values(row).execute(),
  update: (ex: Executor, id: string, patch: Partial<Omit<ConnectorInstancesTable, 'seq' | 'id'>>) => ex.updateTable('connector_instances').set(patch).where('id', '=', id).execute(),
  delete: (ex: Executor, id: string) => ex.deleteFrom('connector_instances').where('id', '=', id).execute(),
};

export const credentialStore = {
  find: (ex: Executor, instanceId: string) => ex.selectFrom('connector_credentials').selectAll().where('instance_id', '=', instanceId).executeTakeFirst(),
  delete: (ex: Executor, instanceId: string) => ex.deleteFrom('connector_credentials').where('instance_id', '=', instanceId).execute(),
};

export const toolStore = {
  list: (ex: Executor, instanceId: string) => ex.selectFrom('connector_tools').selectAll().where('instance_id', '=', instanceId).orderBy('seq').execute(),
  find: (ex: Executor, instanceId: string, id: string) => ex.selectFrom('connector_tools').selectAll().where('instance_id', '=', instanceId).where('id', '=', id).executeTakeFirst(),
};
