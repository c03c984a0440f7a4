import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0011_connector_approval_target',
  async up(db) {
    // What a parked call was asked against: the MCP url's origin (shown to the approver) and
    // a digest of the instance's config (an approved call runs only if it is unchanged).
    // Approvals parked before this migration have neither and are refused when approved.
    await db.schema.alterTable('connector_tool_approvals').addColumn('target_origin', 'text').execute();
    await db.schema.alterTable('connector_tool_approvals').addColumn('target_digest', 'text').execute();
  },
};
