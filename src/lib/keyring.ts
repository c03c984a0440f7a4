import { randomBytes } from 'node:crypto';
import { ConfigError } from '../config.js';
import type { Database } from '../db/connection.js';
import { insertActiveCredentialKey, listCredentialKeys } from '../db/store/credential-keys.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { open, seal, SealError } from './sealed.js';
import type { Secrets } from './secrets.js';

/**
 * The credential keyring of several nodes (docs/postgres.md, Secrets): rotated keys live in the
 * database, each sealed under the key-encryption key every node is given
 * (GANTRY_SECRET_CREDENTIAL_KEY, itself the keyring's first key, `env`). A rotation run on any
 * machine is then a row every node reads, not a file only that machine has.
 */
const keyContext = (id: string) => `credential-key:${id}`;
const underKek = (kek: Buffer) => ({ credentialKeys: new Map([['kek', kek]]), activeCredentialKeyId: 'kek' });

/** Reads the database keyring into `secrets` (in place); the active row, else `env`, is active. */
export async function loadDatabaseKeyring(db: Executor, secrets: Secrets): Promise<void> {
  const kek = secrets.keyEncryptionKey;
  if (!kek) return;
  const rows = await listCredentialKeys(db);
  for (const row of rows) {
    try {
      secrets.credentialKeys.set(
        row.id,
        Buffer.from(open(underKek(kek), row.sealed_key, keyContext(row.id)), 'base64'),
      );
    } catch (err) {
      if (!(err instanceof SealError)) throw err;
      throw new ConfigError(
        'GANTRY_SECRET_CREDENTIAL_KEY does not open the credential keyring in the database; every node needs the same value',
      );
    }
  }
  secrets.activeCredentialKeyId = rows.find((r) => r.active === 1)?.id ?? 'env';
}

/**
 * Adds a fresh key to the database keyring and makes it active; `announce` runs in the same
 * transaction (the change feed), so every node hears of the key once it is there to read.
 */
export async function addDatabaseCredentialKey(
  db: Database,
  secrets: Secrets,
  now: Date,
  announce: (trx: Executor, keyId: string) => Promise<void>,
): Promise<string> {
  const kek = secrets.keyEncryptionKey;
  if (!kek) throw new Error('the database keyring needs GANTRY_SECRET_CREDENTIAL_KEY');
  const keyId = await inTransaction(db, async (trx) => {
    const taken = new Set((await listCredentialKeys(trx)).map((r) => r.id));
    let n = taken.size + 2; // `env` is the first key
    while (taken.has(`c${n}`)) n++;
    const id = `c${n}`;
    const key = randomBytes(32).toString('base64');
    await insertActiveCredentialKey(trx, {
      id,
      sealed_key: seal(underKek(kek), key, keyContext(id)),
      created_at: now.toISOString(),
    });
    await announce(trx, id);
    return id;
  });
  await loadDatabaseKeyring(db, secrets);
  return keyId;
}
