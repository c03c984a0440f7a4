import { moneyType } from './columns.js';
import type { Migration } from './types.js';

/** Default prices, USD per 1M tokens, as micro-dollars (docs/ai.md); `provider set --price-*` overrides. */
const DEFAULT_PRICES: Array<[provider: string, model: string, inMicros: number, outMicros: number]> = [
  ['openai', 'gpt-4o-mini', 150_000, 600_000],
  ['openai', 'gpt-4o', 2_500_000, 10_000_000],
  ['anthropic', 'claude-3-5-haiku-latest', 800_000, 4_000_000],
  ['anthropic', 'claude-sonnet-4-0', 3_000_000, 15_000_000],
  ['google', 'gemini-2.0-flash', 100_000, 400_000],
  ['google', 'gemini-1.5-pro', 1_250_000, 5_000_000],
];

export const migration: Migration = {
  id: '0009_ai',
  async up(db) {
    await db.schema
      .createTable('ai_providers')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('base_url', 'text', (c) => c.notNull())
      .addColumn('api_key_sealed', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('models', 'text', (c) => c.notNull())
      .addColumn('priority', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('ai_model_prices')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('input_micros_per_mtok', moneyType(db), (c) => c.notNull())
      .addColumn('output_micros_per_mtok', moneyType(db), (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('ai_model_prices_pk', ['provider', 'model'])
      .execute();
    const now = new Date(0).toISOString();
    await db
      .insertInto('ai_model_prices')
      .values(
        DEFAULT_PRICES.map(([provider, model, i, o]) => ({
          provider,
          model,
          input_micros_per_mtok: i,
          output_micros_per_mtok: o,
          source: 'default',
          updated_at: now,
        })),
      )
      .execute();

    await db.schema
      .createTable('ai_sessions')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_run_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('ai_sessions_pk', ['account_id', 'id'])
      .execute();
    await db.schema
      .createIndex('ai_sessions_user')
      .on('ai_sessions')
      .columns(['user_id', 'account_id', 'last_run_at'])
      .execute();

    await db.schema
      .createTable('ai_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('requested_model', 'text')
      .addColumn('provider', 'text')
      .addColumn('model', 'text')
      .addColumn('messages', 'text', (c) => c.notNull())
      .addColumn('reply', 'text')
      .addColumn('input_tokens', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('output_tokens', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('cost_micros', moneyType(db))
      .addColumn('reserved_micros', moneyType(db), (c) => c.notNull().defaultTo(0))
      .addColumn('charged_micros', moneyType(db), (c) => c.notNull().defaultTo(0))
      .addColumn('attempts', 'text', (c) => c.notNull())
      .addColumn('error_code', 'text')
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('completed_at', 'text')
      .addColumn('duration_ms', 'integer')
      .addColumn('provider_latency_ms', 'integer')
      .execute();
    await db.schema
      .createIndex('ai_runs_session')
      .on('ai_runs')
      .columns(['account_id', 'session_id', 'started_at'])
      .execute();
    await db.schema.createIndex('ai_runs_user_status').on('ai_runs').columns(['user_id', 'status']).execute();
    await db.schema.createIndex('ai_runs_status_started').on('ai_runs').columns(['status', 'started_at']).execute();
  },
};
