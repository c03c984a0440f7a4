import { sql } from 'kysely';
import type { Migration } from './types.js';

const COLUMNS = [
  'id',
  'key',
  'name',
  'description',
  'auth_kind',
  'cred_type',
  'adapter',
  'authorize_url',
  'token_url',
  'check_url',
  'client_id',
  'client_secret_sealed',
  'scopes',
  'pkce',
  'config_schema',
  'is_system',
  'workspace_id',
  'created_at',
  'updated_at',
];

export const migration: Migration = {
  id: '0012_connector_definition_scope',
  async up(db) {
    // Definition keys were unique across every tenant, so a 409 told one tenant another had a
    // key, and a tenant could take a key before the operator's `gantry connector define`.
    // Now system keys are unique among system definitions and custom keys within their
    // workspace. SQLite cannot drop a column's UNIQUE constraint: the table is rebuilt
    // (nothing references it by foreign key; instances name definitions by key).
    await db.schema
      .createTable('connector_definitions_scoped')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('auth_kind', 'text', (c) => c.notNull())
      .addColumn('cred_type', 'text')
      .addColumn('adapter', 'text', (c) => c.notNull())
      .addColumn('authorize_url', 'text')
      .addColumn('token_url', 'text')
      .addColumn('check_url', 'text')
      .addColumn('client_id', 'text')
      .addColumn('client_secret_sealed', 'text')
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('pkce', 'integer', (c) => c.notNull())
      .addColumn('config_schema', 'text', (c) => c.notNull())
      .addColumn('is_system', 'integer', (c) => c.notNull())
      .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db
      .insertInto('connector_definitions_scoped')
      .columns(COLUMNS)
      .expression(db.selectFrom('connector_definitions').select(COLUMNS))
      .execute();
    await db.schema.dropTable('connector_definitions').execute();
    await db.schema.alterTable('connector_definitions_scoped').renameTo('connector_definitions').execute();
    await db.schema
      .createIndex('connector_definitions_system_key')
      .on('connector_definitions')
      .column('key')
      .unique()
      .where(sql.ref('is_system'), '=', 1)
      .execute();
    await db.schema
      .createIndex('connector_definitions_workspace_key')
      .on('connector_definitions')
      .columns(['workspace_id', 'key'])
      .unique()
      .where(sql.ref('is_system'), '=', 0)
      .execute();
  },
};
