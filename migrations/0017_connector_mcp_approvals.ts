import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0017_connector_mcp_approvals',
  async up(db) {
    // Approvals of MCP tool calls live beside the REST ones (docs/connectors.md, Approvals of
    // MCP calls): one list, one decide endpoint, one sealed input. `mode` tells them apart:
    // 'park' (REST: approving runs the parked call) or 'retry' (MCP: approving lets the
    // identical retry run once). Every earlier row is a parked REST call.
    await db.schema
      .alterTable('connector_tool_approvals')
      .addColumn('mode', 'text', (c) => c.notNull().defaultTo('park'))
      .execute();
    // The OAuth client the call came through, and the SHA-256 of its canonical arguments: with
    // workspace, user and tool, what a retry must match. The arguments themselves are sealed.
    await db.schema.alterTable('connector_tool_approvals').addColumn('client_id', 'text').execute();
    await db.schema.alterTable('connector_tool_approvals').addColumn('args_digest', 'text').execute();
    // Until when it may be decided (pending) or used (approved); null for parked REST calls.
    await db.schema.alterTable('connector_tool_approvals').addColumn('expires_at', 'text').execute();
    // When the caller got its one outcome: the run of an approved one, the refusal of a
    // rejected or expired one. Set once, with a conditional update.
    await db.schema.alterTable('connector_tool_approvals').addColumn('consumed_at', 'text').execute();
    await db.schema
      .createIndex('connector_tool_approvals_binding')
      .on('connector_tool_approvals')
      .columns(['workspace_id', 'requested_by', 'client_id', 'tool_id', 'args_digest'])
      .execute();
  },
};
