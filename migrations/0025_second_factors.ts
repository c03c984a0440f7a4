import { engineOf } from '../src/db/engine.js';
import type { Migration } from './types.js';

/** Second factors, the sessions' devices and proofs, and the account setting for approvers (docs/identity.md). */
export const migration: Migration = {
  id: '0025_second_factors',
  async up(db) {
    // docs/identity.md, Sessions: what the account center shows of a session, and when it last
    // proved a second factor (the step-up rule of approvals reads it).
    await db.schema.alterTable('auth_sessions').addColumn('user_agent', 'text').execute();
    await db.schema.alterTable('auth_sessions').addColumn('ip', 'text').execute();
    await db.schema.alterTable('auth_sessions').addColumn('factor_verified_at', 'text').execute();

    // docs/identity.md, Factors: the TOTP secret sealed like connector credentials; a
    // pending setup has no enabled_at; last_used_step refuses a code's replay.
    await db.schema
      .createTable('user_totp')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('enabled_at', 'text')
      .addColumn('last_used_step', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    // docs/identity.md, Recovery codes: SHA-256 of user id and code, each used once.
    await db.schema
      .createTable('user_recovery_codes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema.createIndex('user_recovery_codes_user').on('user_recovery_codes').columns(['user_id']).execute();

    // docs/identity.md, Passkeys: one row per WebAuthn credential. The signature counter is an
    // unsigned 32-bit number: bigint on PostgreSQL, whose integer is signed 32-bit.
    await db.schema
      .createTable('user_passkeys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('credential_id', 'text', (c) => c.notNull().unique())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', engineOf(db) === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
      .addColumn('transports', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('device_type', 'text', (c) => c.notNull())
      .addColumn('backed_up', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .execute();
    await db.schema.createIndex('user_passkeys_user').on('user_passkeys').columns(['user_id']).execute();

    // docs/accounts.md, Approval settings: an owner's setting, off by default.
    await db.schema
      .alterTable('accounts')
      .addColumn('approvers_need_second_factor', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
