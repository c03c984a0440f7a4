import type { Executor } from '../../db/tx.js';
import type { ConnectorDefinitionsTable } from '../tables.js';

/** Every SQL statement over connector_definitions. */
export const definitionStore = {
  /** The workspace's own definition of a key first, then the operator's system one (workspaceId null: system only). */
  find(ex: Executor, key: string, workspaceId: string | null) {
    let query = ex.selectFrom('connector_definitions').selectAll().where('key', '=', key);
    query = workspaceId
      ? query.where((eb) => eb.or([eb('is_system', '=', 1), eb('workspace_id', '=', workspaceId)]))
      : query.where('is_system', '=', 1);
    return query.orderBy('is_system').executeTakeFirst();
  },

  list(ex: Executor, workspaceId: string | null) {
    let query = ex.selectFrom('connector_definitions').selectAll().orderBy('key');
    query = workspaceId
      ? query.where((eb) => eb.or([eb('is_system', '=', 1), eb('workspace_id', '=', workspaceId)]))
      : query.where('is_system', '=', 1);
    return query.execute();
  },

  findSystem: (ex: Executor, key: string) =>
    ex
      .selectFrom('connector_definitions')
      .select('id')
      .where('key', '=', key)
      .where('is_system', '=', 1)
      .executeTakeFirst(),
  findCustom: (ex: Executor, key: string, workspaceId: string) =>
    ex
      .selectFrom('connector_definitions')
      .select('id')
      .where('key', '=', key)
      .where('is_system', '=', 0)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst(),
  insert: (ex: Executor, row: ConnectorDefinitionsTable) =>
    ex.insertInto('connector_definitions').values(row).execute(),
};
