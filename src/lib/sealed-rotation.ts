import { randomBytes } from 'node:crypto';
import type { Kernel } from '../kernel.js';
import type { Database } from '../db/connection.js';
import { listSealedAfter, replaceSealedValue, type SealedColumnRef } from '../db/store/sealed-columns.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { reseal } from './sealed.js';
import { addDatabaseCredentialKey, loadDatabaseKeyring } from './keyring.js';
import { readSecretsFile, writeSecretsFile, type Secrets } from './secrets.js';

/** Change-feed topic: the credential keyring changed (on disk, or in the database); every process reloads it. */
export const KEYRING_TOPIC = 'secrets.keyring';

/**
 * One sealed column: where it lives, its key column, and how to rebuild the AAD context a
 * value was sealed with from its row.
 */
export interface SealedColumn extends SealedColumnRef {
  context(row: Record<string, unknown>): string;
}

/**
 * What a domain service declares (as its `sealed` member) about its secrets at rest: plain
 * sealed columns the rotation re-seals itself, and/or its own re-seal for values that need
 * more (counts keyed `table.column`).
 */
export interface SealedValues {
  columns?: readonly SealedColumn[];
  reseal?(): Promise<Record<string, number>>;
}

/** Adds a fresh key to secrets.json and makes it active (older keys stay to open old values). */
function addCredentialKey(dataDir: string): { keyId: string } {
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
function reloadCredentialKeys(dataDir: string, secrets: Secrets): void {
  const file = readSecretsFile(dataDir);
  if (!file) return;
  for (const k of file.credentialKeys) secrets.credentialKeys.set(k.id, Buffer.from(k.key, 'base64'));
  if (secrets.activeCredentialKeyId !== 'env') secrets.activeCredentialKeyId = file.activeCredentialKeyId;
}

/**
 * Reloads the credential keyring where it lives: the database on PostgreSQL (src/lib/keyring.ts),
 * else secrets.json.
 */
export async function reloadKeyring(kernel: Pick<Kernel, 'db' | 'secrets' | 'config'>): Promise<void> {
  if (kernel.secrets.keyEncryptionKey) await loadDatabaseKeyring(kernel.db, kernel.secrets);
  else reloadCredentialKeys(kernel.config.dataDir, kernel.secrets);
}

/** Adds the new active key where the keyring lives and tells every process; returns its id. */
async function addKey(kernel: Kernel): Promise<string> {
  const announce = (trx: Executor, keyId: string) => kernel.changes.publish(trx, KEYRING_TOPIC, keyId);
  if (kernel.secrets.keyEncryptionKey)
    return addDatabaseCredentialKey(kernel.db, kernel.secrets, kernel.clock.now(), announce);
  const { keyId } = addCredentialKey(kernel.config.dataDir);
  reloadCredentialKeys(kernel.config.dataDir, kernel.secrets);
  await inTransaction(kernel.db, (trx) => announce(trx, keyId));
  return keyId;
}

/**
 * Re-seals every value of the given columns not yet under the active key, in batches of
 * short transactions (the server keeps serving; a value is rewritten only if it still holds
 * what was read).
 */
async function resealColumns(
  db: Database,
  secrets: Secrets,
  columns: readonly SealedColumn[],
  batch = 200,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const col of columns) {
    const name = `${col.table}.${col.column}`;
    counts[name] = 0;
    let after = '';
    for (;;) {
      const rows = await listSealedAfter(db, col, after, batch);
      if (rows.length === 0) break;
      after = String(rows[rows.length - 1][col.keyColumn]);
      await inTransaction(db, async (trx) => {
        for (const row of rows) {
          const sealed = String(row[col.column]);
          const next = reseal(secrets, sealed, col.context(row));
          if (next === sealed) continue;
          counts[name] += await replaceSealedValue(trx, col, row[col.keyColumn], sealed, next);
        }
      });
    }
  }
  return counts;
}

/**
 * Credential key rotation over every domain service that declares `sealed` values: a new key
 * becomes active in secrets.json (in the database keyring on PostgreSQL); running servers reload the keyring (change feed) before
 * anything is re-sealed under it; then every sealed value is re-encrypted under the new key.
 * Old keys stay in the file. The kernel knows no domain: it takes the services as data.
 */
export function createSecretsRotation(kernel: Kernel, services: Record<string, object>) {
  const declared = Object.values(services)
    .map((s) => (s as { sealed?: SealedValues }).sealed)
    .filter((s): s is SealedValues => s !== undefined);
  return {
    async rotate(options: {
      settleMs: number;
    }): Promise<{ activeKeyId: string; resealed: Record<string, number>; total: number }> {
      const keyId = await addKey(kernel);
      if (options.settleMs > 0) await new Promise((resolve) => setTimeout(resolve, options.settleMs));
      const resealed: Record<string, number> = {};
      for (const values of declared) {
        if (values.columns) Object.assign(resealed, await resealColumns(kernel.db, kernel.secrets, values.columns));
        if (values.reseal) Object.assign(resealed, await values.reseal());
      }
      const total = Object.values(resealed).reduce((a, b) => a + b, 0);
      return { activeKeyId: keyId, resealed, total };
    },
  };
}
