import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../schema.js';
import type { Executor } from '../tx.js';

/** Where a sealed column lives: its table, the key column that orders it, and the extra columns read with it. */
export interface SealedColumnRef {
  table: keyof DB & string;
  keyColumn: string;
  column: string;
  contextColumns: string[];
}

// Untyped access: the columns are data here, not code.
type AnyExecutor =
  | Kysely<Record<string, Record<string, unknown>>>
  | Transaction<Record<string, Record<string, unknown>>>;
const untyped = (db: Executor) => db as unknown as AnyExecutor;

/** The next `limit` rows holding a sealed value, in key order after `after`. */
export const listSealedAfter = async (db: Executor, col: SealedColumnRef, after: string, limit: number) =>
  (await untyped(db)
    .selectFrom(col.table)
    .select([col.keyColumn, col.column, ...col.contextColumns])
    .where(col.keyColumn, '>', after)
    .where(col.column, 'is not', null)
    .orderBy(col.keyColumn)
    .limit(limit)
    .execute()) as Array<Record<string, unknown>>;

/** Swaps one sealed value for its re-sealed form, only if the row still holds what was read; 1 if it did. */
export async function replaceSealedValue(
  db: Executor,
  col: SealedColumnRef,
  key: unknown,
  from: string,
  to: string,
): Promise<number> {
  const res = await untyped(db)
    .updateTable(col.table)
    .set({ [col.column]: to })
    .where(col.keyColumn, '=', key)
    .where(col.column, '=', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
