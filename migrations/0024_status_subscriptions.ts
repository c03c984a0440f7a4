import type { Migration } from './types.js';

/**
 * Status subscriptions (docs/status.md, Subscriptions): email (double opt-in) and webhook
 * subscribers, the events published to them and each webhook delivery; and the outbox's extra
 * headers, which every subscriber mail needs (List-Unsubscribe, RFC 8058).
 */
export const migration: Migration = {
  id: '0024_status_subscriptions',
  async up(db) {
    // A JSON object of extra headers (docs/kernel.md, Mail); null for a mail without any.
    await db.schema.alterTable('mail_outbox').addColumn('headers', 'text').execute();

    await db.schema
      .createTable('status_subscriptions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull()) // email, webhook
      // Stored for this purpose only, and deleted on unsubscribe: one subscription per address.
      .addColumn('email', 'text')
      .addColumn('webhook_url', 'text')
      // The URL's host, for the per-host quota of webhook subscriptions.
      .addColumn('webhook_host', 'text')
      // The signing secret of a webhook, sealed (src/lib/sealed.ts); shown once, at creation.
      .addColumn('secret_sealed', 'text')
      // A JSON array of component ids; null: every public component and platform-wide news.
      .addColumn('component_ids', 'text')
      // An email subscription's pending confirmation: the SHA-256 of the mailed secret.
      .addColumn('confirm_token_hash', 'text')
      .addColumn('confirm_expires_at', 'text')
      .addColumn('confirmed_at', 'text')
      // A webhook that failed for a day (or answered 410) gets nothing more.
      .addColumn('disabled_at', 'text')
      .addColumn('disabled_reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('status_subscriptions_email')
      .unique()
      .on('status_subscriptions')
      .columns(['email'])
      .execute();
    await db.schema
      .createIndex('status_subscriptions_confirm')
      .on('status_subscriptions')
      .columns(['confirm_token_hash'])
      .execute();
    await db.schema
      .createIndex('status_subscriptions_host')
      .on('status_subscriptions')
      .columns(['webhook_host'])
      .execute();

    // What happened (incident.created ... maintenance.completed), written in the publishing
    // transaction; the fan-out job walks the subscribers after `fanout_after` in batches.
    await db.schema
      .createTable('status_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('subject_id', 'text', (c) => c.notNull())
      // A JSON array of the public component ids it concerns; null: platform-wide (everyone).
      .addColumn('targets', 'text')
      // The webhook body's JSON, as of the event.
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('fanout_after', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('fanned_out_at', 'text')
      .execute();
    await db.schema
      .createIndex('status_events_pending')
      .on('status_events')
      .columns(['fanned_out_at', 'created_at'])
      .execute();

    await db.schema
      .createTable('status_webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('subscription_id', 'text', (c) =>
        c.notNull().references('status_subscriptions.id').onDelete('cascade'),
      )
      .addColumn('event_id', 'text', (c) => c.notNull().references('status_events.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull()) // pending, delivered, failed
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('claimed_until', 'text')
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .addUniqueConstraint('status_webhook_deliveries_once', ['subscription_id', 'event_id'])
      .execute();
    await db.schema
      .createIndex('status_webhook_deliveries_due')
      .on('status_webhook_deliveries')
      .columns(['status', 'next_attempt_at'])
      .execute();
  },
};
