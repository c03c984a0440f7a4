import type { Selectable } from 'kysely';
import type { Executor } from '../db/tx.js';
import type { AiModelPricesTable, AiProvidersTable, AiRunsTable } from './tables.js';

export type ProviderRow = Selectable<AiProvidersTable>;
export type RunRow = Selectable<AiRunsTable>;
export type PriceRow = Selectable<AiModelPricesTable>;

export const listProviders = (db: Executor) =>
  db.selectFrom('ai_providers').selectAll().orderBy('priority').orderBy('name').execute();

export const getProvider = (db: Executor, name: string) =>
  db.selectFrom('ai_providers').selectAll().where('name', '=', name).executeTakeFirst();

export async function upsertProvider(db: Executor, row: ProviderRow): Promise<void> {
  await db
    .insertInto('ai_providers')
    .values(row)
    .onConflict((oc) =>
      oc.column('name').doUpdateSet({
        base_url: row.base_url,
        api_key_sealed: row.api_key_sealed,
        key_id: row.key_id,
        models: row.models,
        priority: row.priority,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

/** A provider's key re-sealed under another credential key (`key_id` names that key). */
export async function setProviderKey(db: Executor, name: string, apiKeySealed: string, keyId: string): Promise<void> {
  await db
    .updateTable('ai_providers')
    .set({ api_key_sealed: apiKeySealed, key_id: keyId })
    .where('name', '=', name)
    .execute();
}

export async function deleteProvider(db: Executor, name: string): Promise<boolean> {
  const result = await db.deleteFrom('ai_providers').where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export const listPrices = (db: Executor) =>
  db.selectFrom('ai_model_prices').selectAll().orderBy('provider').orderBy('model').execute();

export async function upsertPrice(db: Executor, row: PriceRow): Promise<void> {
  await db
    .insertInto('ai_model_prices')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['provider', 'model']).doUpdateSet({
        input_micros_per_mtok: row.input_micros_per_mtok,
        output_micros_per_mtok: row.output_micros_per_mtok,
        source: row.source,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export const getSession = (db: Executor, accountId: string, sessionId: string) =>
  db
    .selectFrom('ai_sessions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', sessionId)
    .executeTakeFirst();

export async function touchSession(
  db: Executor,
  accountId: string,
  sessionId: string,
  userId: string,
  at: string,
): Promise<void> {
  await db
    .insertInto('ai_sessions')
    .values({ account_id: accountId, id: sessionId, user_id: userId, created_at: at, last_run_at: at })
    .onConflict((oc) => oc.columns(['account_id', 'id']).doUpdateSet({ last_run_at: at }))
    .execute();
}

export async function insertRun(db: Executor, row: RunRow): Promise<void> {
  await db.insertInto('ai_runs').values(row).execute();
}

export async function finishRun(db: Executor, id: string, patch: Partial<RunRow>): Promise<void> {
  await db.updateTable('ai_runs').set(patch).where('id', '=', id).execute();
}

export const getRun = (db: Executor, id: string) =>
  db.selectFrom('ai_runs').selectAll().where('id', '=', id).executeTakeFirst();

/** Funds held by a user's runs still in flight (started after `since`; older ones are abandoned). */
export async function reservedMicros(db: Executor, userId: string, since: string): Promise<number> {
  const row = await db
    .selectFrom('ai_runs')
    .select((eb) => eb.fn.sum<number>('reserved_micros').as('held'))
    .where('user_id', '=', userId)
    .where('status', '=', 'running')
    .where('started_at', '>', since)
    .executeTakeFirst();
  return Number(row?.held ?? 0);
}

/** Marks runs left running by a crashed process as failed, releasing their hold. */
export async function abandonStaleRuns(db: Executor, before: string, at: string): Promise<number> {
  const result = await db
    .updateTable('ai_runs')
    .set({ status: 'failed', error_code: 'ABANDONED', reserved_micros: 0, completed_at: at })
    .where('status', '=', 'running')
    .where('started_at', '<=', before)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function sessionUsage(db: Executor, accountId: string, sessionId: string) {
  return db
    .selectFrom('ai_runs')
    .select((eb) => [
      eb.fn.countAll<number>().as('runs'),
      eb.fn.coalesce(eb.fn.sum<number>('input_tokens'), eb.val(0)).as('input'),
      eb.fn.coalesce(eb.fn.sum<number>('output_tokens'), eb.val(0)).as('output'),
      eb.fn.coalesce(eb.fn.sum<number>('cost_micros'), eb.val(0)).as('cost'),
      eb.fn
        .sum<number>(
          eb
            .case()
            .when(eb.and([eb('status', '=', 'succeeded'), eb('cost_micros', 'is', null)]))
            .then(1)
            .else(0)
            .end(),
        )
        .as('unpriced'),
    ])
    .where('account_id', '=', accountId)
    .where('session_id', '=', sessionId)
    .where('status', '!=', 'running')
    .executeTakeFirstOrThrow();
}

/** The turns of a session's earlier succeeded runs, oldest first (the session layer). */
export async function sessionTurns(db: Executor, accountId: string, sessionId: string, limit: number) {
  const rows = await db
    .selectFrom('ai_runs')
    .select(['messages', 'reply', 'started_at'])
    .where('account_id', '=', accountId)
    .where('session_id', '=', sessionId)
    .where('status', '=', 'succeeded')
    .orderBy('started_at', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
}

/** The user's most recent sessions in the account, with their first message (the memory layer). */
export async function recentSessions(db: Executor, accountId: string, userId: string, limit: number) {
  const sessions = await db
    .selectFrom('ai_sessions')
    .select(['id', 'last_run_at'])
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('ai_runs')
          .select('id')
          .whereRef('ai_runs.account_id', '=', 'ai_sessions.account_id')
          .whereRef('ai_runs.session_id', '=', 'ai_sessions.id')
          .where('ai_runs.status', '=', 'succeeded'),
      ),
    )
    .orderBy('last_run_at', 'desc')
    .limit(limit)
    .execute();
  const out: Array<{ id: string; firstMessages: string }> = [];
  for (const s of sessions) {
    const first = await db
      .selectFrom('ai_runs')
      .select('messages')
      .where('account_id', '=', accountId)
      .where('session_id', '=', s.id)
      .where('status', '=', 'succeeded')
      .orderBy('started_at')
      .limit(1)
      .executeTakeFirst();
    if (first) out.push({ id: s.id, firstMessages: first.messages });
  }
  return out;
}
