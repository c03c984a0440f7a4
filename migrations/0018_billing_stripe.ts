import { moneyType } from './columns.js';
import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0018_billing_stripe',
  async up(db) {
    // How an account maps to its customer and seat subscription item at the billing provider
    // (docs/billing.md, Connecting an account). Set by `gantry account billing`.
    await db.schema
      .createTable('billing_accounts')
      .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text')
      .addColumn('seat_item_id', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    // Wallet top-ups started at the provider. `credited_at` is set once, by a conditional
    // update in the transaction that credits the wallet: a session is never credited twice.
    await db.schema
      .createTable('billing_checkouts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('account_id', 'text')
      .addColumn('amount', moneyType(db), (c) => c.notNull()) // minor units of `currency`
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull()) // open, credited
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('credited_at', 'text')
      .addColumn('credit_event_id', 'text')
      .execute();
    await db.schema.createIndex('billing_checkouts_user').on('billing_checkouts').columns(['user_id']).execute();

    // Every provider event applied, by its id, inserted in the transaction of its effect: a
    // redelivery (Stripe retries, and may deliver twice at once) finds its id and does nothing.
    await db.schema
      .createTable('billing_events')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('billing_events_pk', ['provider', 'event_id'])
      .execute();

    // The events of the former home-made signature scheme, which no provider sends.
    await db.schema.dropTable('billing_webhook_events').ifExists().execute();
  },
};
