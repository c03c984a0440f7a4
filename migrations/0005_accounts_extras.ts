import type { Migration } from './types.js';

/**
 * Accounts beyond the core of 0002: deletion bookkeeping, invitations, ownership transfers,
 * enterprise API keys, seat releases with their billing webhook, and the audit counter that
 * keeps `meta.total` of the audit log O(1).
 */
export const migration: Migration = {
  id: '0005_accounts_extras',
  async up(db) {
    // The status an account had before its soft delete (restore returns to it) and who closed it.
    await db.schema.alterTable('accounts').addColumn('status_before_close', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('deleted_by', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('hard_deleted_at', 'text').execute();
    await db.schema.createIndex('accounts_status').on('accounts').columns(['status', 'purge_after']).execute();

    await db.schema
      .createTable('account_invitations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull()) // pending, accepted, revoked
      .addColumn('invited_by', 'text', (c) => c.notNull())
      .addColumn('token_id', 'text', (c) => c.notNull()) // the current one-time token (resend replaces it)
      .addColumn('sent_count', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('accepted_at', 'text')
      .addColumn('accepted_by', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema
      .createIndex('account_invitations_account')
      .on('account_invitations')
      .columns(['account_id', 'status', 'email'])
      .execute();

    await db.schema
      .createTable('account_ownership_transfers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('from_user_id', 'text', (c) => c.notNull())
      .addColumn('to_user_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull()) // pending, accepted, cancelled
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'text')
      .execute();
    await db.schema
      .createIndex('account_ownership_transfers_account')
      .on('account_ownership_transfers')
      .columns(['account_id', 'status'])
      .execute();

    await db.schema
      .createTable('account_api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key_prefix', 'text', (c) => c.notNull())
      .addColumn('last_four', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('revoked_at', 'text')
      .addColumn('revoke_reason', 'text')
      .execute();
    await db.schema
      .createIndex('account_api_keys_account_user')
      .on('account_api_keys')
      .columns(['account_id', 'user_id'])
      .execute();

    // No foreign key to accounts: a confirmation may arrive after the account is purged.
    await db.schema
      .createTable('account_seat_releases')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull()) // requested, confirmed, or the reason it did not happen
      .addColumn('requested_by', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('confirmed_at', 'text')
      .execute();

    await db.schema
      .createTable('billing_webhook_events')
      .addColumn('id', 'text', (c) => c.primaryKey()) // the provider's event id: a replay is a no-op
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('account_audit_counts')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('total', 'integer', (c) => c.notNull())
      .execute();
    // Entries written before this migration (0002 onwards) are counted once here.
    await db
      .insertInto('account_audit_counts')
      .columns(['account_id', 'total'])
      .expression(
        db
          .selectFrom('account_audit_log')
          .select(['account_id', db.fn.countAll().as('total')])
          .groupBy('account_id'),
      )
      .execute();
  },
};
