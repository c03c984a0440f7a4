import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0006_notifications',
  async up(db) {
    await db.schema
      .createTable('notifications')
      .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('icon', 'text')
      .addColumn('action_url', 'text')
      .addColumn('category', 'text', (c) => c.notNull())
      .addColumn('priority', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('read_at', 'text')
      .addColumn('archived_at', 'text')
      .addColumn('expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    // Default listing (unread and read together) walks (user_id, seq) newest first.
    await db.schema.createIndex('notifications_user_seq').on('notifications').columns(['user_id', 'seq']).execute();
    // Listing by status in seq order; expires_at at the end makes the unread count and the
    // offset total index-only scans (no table lookups for the expiry test).
    await db.schema.createIndex('notifications_user_status_seq').on('notifications').columns(['user_id', 'status', 'seq', 'expires_at']).execute();
  },
};
