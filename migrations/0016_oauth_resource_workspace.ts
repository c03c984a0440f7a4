import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0016_oauth_resource_workspace',
  async up(db) {
    // The resource a grant's tokens are for (RFC 8707; docs/oauth.md, Resource indicators):
    // 'api' (the REST API, what every earlier grant was for) or 'mcp' (the MCP endpoint).
    await db.schema
      .alterTable('oauth_grants')
      .addColumn('resource', 'text', (c) => c.notNull().defaultTo('api'))
      .execute();
    // The one workspace an MCP grant exposes, chosen on the consent page. Deleting the
    // workspace deletes the grant, and with it every token issued from it.
    await db.schema
      .alterTable('oauth_grants')
      .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id').onDelete('cascade'))
      .execute();
  },
};
