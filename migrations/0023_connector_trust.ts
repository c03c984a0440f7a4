import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0023_connector_trust',
  async up(db) {
    // docs/connectors.md, Tool names: a name an agent has called stays bound to the instance and
    // tool it reached; no other tool of the workspace is served under it. Kept after the
    // instance is deleted (unless released), so the name never comes to mean another one.
    await db.schema
      .createTable('connector_tool_names')
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      // The exposed name in lower case: clients compare names ignoring case.
      .addColumn('name_key', 'text', (c) => c.notNull())
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('tool_key', 'text', (c) => c.notNull())
      .addColumn('bound_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('connector_tool_names_pk', ['workspace_id', 'name_key'])
      .execute();
    await db.schema
      .createIndex('connector_tool_names_instance')
      .on('connector_tool_names')
      .columns(['instance_id'])
      .execute();
    // docs/connectors.md, Tool definitions: a sync that finds another definition keeps the
    // accepted one and holds the new one here until an owner or admin accepts it.
    await db.schema.alterTable('connector_tools').addColumn('pending_definition', 'text').execute();
    await db.schema.alterTable('connector_tools').addColumn('pending_detected_at', 'text').execute();
    // docs/connectors.md, OAuth linking: the browser that started a link (SHA-256 of its
    // cookie), and a callback's code held for the linking member's confirmation when another
    // browser (or one without the cookie) completes it.
    await db.schema.alterTable('connector_oauth_states').addColumn('browser_hash', 'text').execute();
    await db.schema.alterTable('connector_oauth_states').addColumn('held_code_sealed', 'text').execute();
  },
};
