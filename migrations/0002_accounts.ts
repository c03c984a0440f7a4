import { serialKey } from './columns.js';
import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0002_accounts',
  async up(db) {
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('legal_name', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('website', 'text')
      .addColumn('industry', 'text')
      .addColumn('billing_email', 'text')
      .addColumn('default_timezone', 'text')
      .addColumn('avatar_url', 'text')
      .addColumn('account_type', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('deleted_at', 'text')
      .addColumn('purge_after', 'text')
      .execute();
    await db.schema.createIndex('accounts_purge_after').on('accounts').columns(['purge_after']).execute();

    await db.schema
      .createTable('account_members')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('invited_by', 'text')
      .addColumn('joined_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('account_members_pk', ['account_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('account_members_user')
      .on('account_members')
      .columns(['user_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('workspaces')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('workspaces_account').on('workspaces').columns(['account_id']).execute();

    await db.schema
      .createTable('workspace_members')
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('workspace_members_pk', ['workspace_id', 'user_id'])
      .execute();
    await db.schema.createIndex('workspace_members_user').on('workspace_members').columns(['user_id']).execute();

    await db.schema
      .createTable('account_entitlements')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('feature', 'text', (c) => c.notNull())
      .addColumn('granted_at', 'text', (c) => c.notNull())
      .addColumn('granted_by', 'text')
      .addPrimaryKeyConstraint('account_entitlements_pk', ['account_id', 'feature'])
      .execute();

    // No foreign key to accounts: the trail of a deletion outlives the purge (issue: retention).
    await db.schema
      .createTable('account_audit_log')
      .addColumn('seq', ...serialKey(db))
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text', (c) => c.notNull())
      .addColumn('actor_username', 'text', (c) => c.notNull())
      .addColumn('target_id', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('account_audit_log_account_seq')
      .on('account_audit_log')
      .columns(['account_id', 'seq'])
      .execute();
  },
};
