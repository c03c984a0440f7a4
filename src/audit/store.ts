import { sql, type Insertable } from 'kysely';
import type { AccountAuditLogTable } from './tables.js';
import type { Executor } from '../db/tx.js';
import { engineOf } from '../db/engine.js';
import { compiledStatement } from '../db/compiled.js';

/** Every SQL statement over the audit tables (account_audit_log and its per-account count). */

/** A new entry: every column but the keyset sequence, which the database assigns. */
export type AuditRow = Omit<Insertable<AccountAuditLogTable>, 'seq'>;

// Every audited change runs these two: compiled once (docs/kernel.md, Compiled statements).
const insertEntryStatement = compiledStatement<keyof AuditRow, never>((db, p) =>
  db.insertInto('account_audit_log').values({
    id: p('id'),
    account_id: p('account_id'),
    action: p('action'),
    actor_id: p('actor_id'),
    actor_username: p('actor_username'),
    target_id: p('target_id'),
    metadata: p('metadata'),
    created_at: p('created_at'),
  }),
);
// The per-account count keeps the log's meta.total O(1) on every page.
const countEntryStatement = compiledStatement<'accountId', never>((db, p) =>
  db
    .insertInto('account_audit_counts')
    .values({ account_id: p('accountId'), total: 1 })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet((eb) => ({ total: eb('account_audit_counts.total', '+', 1) })),
    ),
);

export async function insertEntry(executor: Executor, row: AuditRow): Promise<void> {
  await insertEntryStatement.rows(executor, row);
  await countEntryStatement.rows(executor, { accountId: row.account_id });
}

/** One page of an account's log, newest first, from before seq `after` when given (index account_id, seq). */
export function listEntries(executor: Executor, accountId: string, after: number | null, limit: number) {
  let q = executor
    .selectFrom('account_audit_log')
    .select(['seq', 'id', 'action', 'actor_id', 'actor_username', 'target_id', 'metadata', 'created_at'])
    .where('account_id', '=', accountId);
  if (after !== null) q = q.where('seq', '<', after);
  return q.orderBy('seq', 'desc').limit(limit).execute();
}

export const countEntries = (executor: Executor, accountId: string) =>
  executor.selectFrom('account_audit_counts').select('total').where('account_id', '=', accountId).executeTakeFirst();

/** Audit entries of some actions in an account since a moment (for quotas): how many, and the oldest's time. */
export async function countSince(
  executor: Executor,
  accountId: string,
  actions: readonly string[],
  sinceIso: string,
  email?: string,
): Promise<{ count: number; oldest: string | null }> {
  let query = executor
    .selectFrom('account_audit_log')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('account_id', '=', accountId)
    .where('action', 'in', [...actions])
    .where('created_at', '>', sinceIso);
  if (email !== undefined) {
    // metadata is JSON text on both engines (docs/postgres.md, Schema); each reads it its own way.
    const field =
      engineOf(executor) === 'postgres'
        ? sql<string>`(metadata::jsonb ->> 'email')`
        : sql<string>`json_extract(metadata, '$.email')`;
    query = query.where(field, '=', email);
  }
  const row = await query.executeTakeFirstOrThrow();
  return { count: Number(row.n), oldest: (row.oldest as string | null) ?? null };
}
