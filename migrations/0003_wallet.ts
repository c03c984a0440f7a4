import { moneyType } from './columns.js';
import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0003_wallet',
  async up(db) {
    await db.schema
      .createTable('wallets')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('balance_micros', moneyType(db), (c) => c.notNull().defaultTo(0))
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('wallet_ledger')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('amount_micros', moneyType(db), (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('reference', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('wallet_ledger_user').on('wallet_ledger').columns(['user_id', 'created_at']).execute();
  },
};
