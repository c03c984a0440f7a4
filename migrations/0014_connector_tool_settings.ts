import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0014_connector_tool_settings',
  async up(db) {
    // The prefix of an instance's tools as Gantry serves them over MCP (docs/connectors.md,
    // Tools over MCP): null derives it from the display name, '' keeps the tools' own names.
    await db.schema.alterTable('connector_instances').addColumn('tool_prefix', 'text').execute();
    // Who last set a tool's requiresApproval by hand: once a person chose, a sync keeps the
    // choice instead of following the server's destructiveHint. Null: no one has.
    await db.schema.alterTable('connector_tools').addColumn('requires_approval_set_by', 'text').execute();
    // The MCP annotations a server listed with the tool (JSON), passed on to MCP clients.
    await db.schema.alterTable('connector_tools').addColumn('annotations', 'text').execute();
  },
};
