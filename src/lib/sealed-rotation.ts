import type { Kysely, Transaction } from 'kysely';
import { randomBytes } from 'node:crypto';
import type { DB } from '../db/schema.js';
import { inTransaction } from '../db/tx.js';
import { reseal } from './sealed.js';
import { readSecretsFile, writeSecretsFile, type Secrets } from './secrets.js';

/**
 * One sealed column: where it lives, its key column, and how to rebuild the AAD context a
 * value was sealed with from its row. Domains list theirs; `gantry secrets rotate` walks all.
 */
export interface SealedColumn {
  table: keyof DB & string;
  keyColumn: string;
  column: string;
  /** Extra columns the context needs. */
  contextColumns: string[];
  context(row: Record<string, unknown>): string;
}

/** Adds a fresh key to secrets.json and makes it active (older keys stay to open old values). */
export function addCredentialKey(dataDir: string): { keyId: string } {
  const file = readSecretsFile(dataDir);
  if (!file) throw new Error('secrets.json does not exist yet; start gantry once first');
  let n = file.credentialKeys.length + 1;
  while (file.credentialKeys.some((k) => k.id === `k${n}`)) n++;
  const keyId = `k${n}`;
  file.credentialKeys.push({ id: keyId, key: randomBytes(32).toString('base64') });
  file.activeCredentialKeyId = keyId;
  writeSecretsFile(dataDir, file);
  return { keyId };
}

/** Reloads the credential keyring from secrets.json into a live Secrets object (in place). */
export function reloadCredentialKeys(dataDir: string, secrets: Secrets): void {
  const file = readSecretsFile(dataDir);
  if (!file) return;
  for (const k of file.credentialKeys) secrets.credentialKeys.set(k.id, Buffer.from(k.key, 'base64'));
  if (secrets.activeCredentialKeyId !== 'env') secrets.activeCredentialKeyId = file.activeCredentialKeyId;
}

/**
 * Re-seals every value of the given columns not yet under the active key, in batches of
 * short transactions (the server keeps serving; a value is rewritten only if it still holds
 * what was read).
 */
export async function resealColumns(db: Kysely<DB>, secrets: Secrets, columns: readonly SealedColumn[], batch = 200): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  // Untyped access: the columns are data here, not code.
  const anyDb = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
  for (const col of columns) {
    counts[`${col.table}.${col.column}`] = 0;
    let after = '';
    for (;;) {
      const rows = (await anyDb
        .selectFrom(col.table)
        .select([col.keyColumn, col.column, ...col.contextColumns])
        .where(col.keyColumn, '>', after)
        .where(col.column, 'is not', null)
        .orderBy(col.keyColumn)
        .limit(batch)
        .execute()) as Array<Record<string, unknown>>;
      if (rows.length === 0) break;
      after = String(rows[rows.length - 1][col.keyColumn]);
      await inTransaction(db, async (typed) => {
        const trx = typed as unknown as Transaction<Record<string, Record<string, unknown>>>;
        for (const row of rows) {
          const sealed = String(row[col.column]);
          const next = reseal(secrets, sealed, col.context(row));
          if (next === sealed) continue;
          const res = await trx.updateTable(col.table).set({ [col.column]: next }).where(col.keyColumn, '=', row[col.keyColumn]).where(col.column, '=', sealed).executeTakeFirst();
          counts[`${col.table}.${col.column}`] += Number(res.numUpdatedRows);
        }
      });
    }
  }
  return counts;
}
