import { sql } from 'kysely';
import { serialKey } from './columns.js';
import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0006_notifications',
  async up(db) {
    await db.schema
      .createTable('notifications')
      .addColumn('seq', ...serialKey(db))
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
    // Default listing (unread and read together) walks this newest first. Partial: archived
    // rows are not in it, so a user with many archived ones pays nothing for them, and the
    // last cursor page costs what the first does. The store repeats the predicate literally.
    await db.schema
      .createIndex('notifications_user_live_seq')
      .on('notifications')
      .columns(['user_id', 'seq'])
      .where(sql.ref('status'), '<>', sql.lit('archived'))
      .execute();
    // Listing by status in seq order; expires_at at the end makes the unread count and the
    // offset total index-only scans (no table lookups for the expiry test).
    await db.schema
      .createIndex('notifications_user_status_seq')
      .on('notifications')
      .columns(['user_id', 'status', 'seq', 'expires_at'])
      .execute();
  },
};
