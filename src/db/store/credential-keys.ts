import type { Executor } from '../tx.js';

/** Every key of the database keyring (PostgreSQL), oldest first. */
export const listCredentialKeys = (db: Executor) =>
  db.selectFrom('credential_keys').select(['id', 'sealed_key', 'active']).orderBy('created_at').orderBy('id').execute();

/** Adds a key and makes it the only active one. */
export async function insertActiveCredentialKey(
  trx: Executor,
  row: { id: string; sealed_key: string; created_at: string },
): Promise<void> {
  await trx.updateTable('credential_keys').set({ active: 0 }).where('active', '=', 1).execute();
  await trx
    .insertInto('credential_keys')
    .values({ ...row, active: 1 })
    .execute();
}
