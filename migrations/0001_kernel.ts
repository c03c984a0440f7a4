import { serialKey } from './columns.js';
import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0001_kernel',
  async up(db) {
    await db.schema
      .createTable('change_feed')
      .addColumn('id', ...serialKey(db))
      .addColumn('topic', 'text', (c) => c.notNull())
      .addColumn('key', 'text')
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('mail_outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('to_address', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('body_text', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('sent_at', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .execute();
    await db.schema.createIndex('mail_outbox_created').on('mail_outbox').columns(['created_at']).execute();

    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('email_verified_at', 'text')
      .addColumn('password_hash', 'text')
      .addColumn('full_name', 'text')
      .addColumn('username', 'text', (c) => c.unique())
      .addColumn('avatar_url', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('auth_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .addColumn('revoke_reason', 'text')
      .execute();
    await db.schema.createIndex('auth_sessions_user').on('auth_sessions').columns(['user_id']).execute();

    await db.schema
      .createTable('auth_refresh_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('session_id', 'text', (c) => c.notNull().references('auth_sessions.id').onDelete('cascade'))
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('consumed_at', 'text')
      .execute();
    await db.schema
      .createIndex('auth_refresh_tokens_session')
      .on('auth_refresh_tokens')
      .columns(['session_id'])
      .execute();

    await db.schema
      .createTable('one_time_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('payload', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('consumed_at', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('one_time_tokens_lookup')
      .unique()
      .on('one_time_tokens')
      .columns(['purpose', 'token_hash'])
      .execute();
    await db.schema.createIndex('one_time_tokens_user').on('one_time_tokens').columns(['user_id', 'purpose']).execute();
  },
};
