import { serialKey } from './columns.js';
import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0008_connectors',
  async up(db) {
    // Definitions stored in the database: operator-defined system ones (`gantry connector
    // define`) and workspace-defined custom ones. Built-ins live in code (definitions.ts).
    await db.schema
      .createTable('connector_definitions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('key', 'text', (c) => c.notNull().unique())
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

    await db.schema
      .createTable('connector_instances')
      .addColumn('seq', ...serialKey(db))
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('connector_key', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('last_health_check', 'text')
      .addColumn('health_message', 'text')
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('connector_instances_workspace_seq')
      .on('connector_instances')
      .columns(['workspace_id', 'seq'])
      .execute();

    // One credential per instance; the values are one sealed JSON document.
    await db.schema
      .createTable('connector_credentials')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('instance_id', 'text', (c) =>
        c.notNull().unique().references('connector_instances.id').onDelete('cascade'),
      )
      .addColumn('cred_type', 'text', (c) => c.notNull())
      .addColumn('sealed_value', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text')
      .addColumn('expires_at', 'text')
      .addColumn('refresh_claim', 'text')
      .addColumn('refresh_claimed_until', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('rotated_at', 'text', (c) => c.notNull())
      .execute();
    // The refresh job's scan: OAuth credentials by expiry.
    await db.schema
      .createIndex('connector_credentials_due')
      .on('connector_credentials')
      .columns(['cred_type', 'expires_at'])
      .execute();
    await db.schema
      .createIndex('connector_credentials_claim')
      .on('connector_credentials')
      .columns(['refresh_claim'])
      .execute();

    await db.schema
      .createTable('connector_tools')
      .addColumn('seq', ...serialKey(db))
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('instance_id', 'text', (c) => c.notNull().references('connector_instances.id').onDelete('cascade'))
      .addColumn('connector_key', 'text', (c) => c.notNull())
      .addColumn('tool_key', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('input_schema', 'text', (c) => c.notNull())
      .addColumn('output_schema', 'text', (c) => c.notNull())
      .addColumn('requires_approval', 'integer', (c) => c.notNull())
      .addColumn('rate_limit_rpm', 'integer')
      .addColumn('is_active', 'integer', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('translations', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('connector_tools_instance_key')
      .on('connector_tools')
      .columns(['instance_id', 'tool_key'])
      .unique()
      .execute();

    // Server-side record of an OAuth linking flow: the state is stored as its SHA-256.
    await db.schema
      .createTable('connector_oauth_states')
      .addColumn('state_hash', 'text', (c) => c.primaryKey())
      .addColumn('instance_id', 'text', (c) => c.notNull().references('connector_instances.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('connector_key', 'text', (c) => c.notNull())
      .addColumn('verifier_sealed', 'text')
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('connector_tool_approvals')
      .addColumn('seq', ...serialKey(db))
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('instance_id', 'text', (c) => c.notNull().references('connector_instances.id').onDelete('cascade'))
      .addColumn('tool_id', 'text', (c) => c.notNull().references('connector_tools.id').onDelete('cascade'))
      .addColumn('input_sealed', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('requested_by', 'text', (c) => c.notNull())
      .addColumn('decided_by', 'text')
      .addColumn('decided_at', 'text')
      .addColumn('result', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('connector_tool_approvals_ws')
      .on('connector_tool_approvals')
      .columns(['workspace_id', 'status', 'seq'])
      .execute();
  },
};
