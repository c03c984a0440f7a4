import type { Insertable } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { AccountApiKeysTable } from '../tables.js';

/** Every SQL statement over enterprise API keys. */

/** A key by its hash, with its account's and its owner's membership status (bearer verification). */
export function findKeyByHash(db: Executor, keyHash: string) {
  return db
    .selectFrom('account_api_keys')
    .innerJoin('accounts', 'accounts.id', 'account_api_keys.account_id')
    .innerJoin('account_members', (join) =>
      join
        .onRef('account_members.account_id', '=', 'account_api_keys.account_id')
        .onRef('account_members.user_id', '=', 'account_api_keys.user_id'),
    )
    .select([
      'account_api_keys.id',
      'account_api_keys.user_id',
      'account_api_keys.account_id',
      'account_api_keys.revoked_at',
      'account_api_keys.last_used_at',
      'accounts.status as account_status',
      'account_members.status as member_status',
    ])
    .where('account_api_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
}

export async function touchKey(db: Executor, id: string, usedAt: string): Promise<void> {
  await db.updateTable('account_api_keys').set({ last_used_at: usedAt }).where('id', '=', id).execute();
}

export async function insertKey(db: Executor, row: Insertable<AccountApiKeysTable>): Promise<void> {
  await db.insertInto('account_api_keys').values(row).execute();
}

/** The account's keys, newest first; only the user's own when `ownerId` is given. */
export function listKeys(db: Executor, accountId: string, ownerId: string | null) {
  let q = db.selectFrom('account_api_keys').selectAll().where('account_id', '=', accountId);
  if (ownerId !== null) q = q.where('user_id', '=', ownerId);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export const findKey = (db: Executor, accountId: string, keyId: string) =>
  db
    .selectFrom('account_api_keys')
    .selectAll()
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();

/** The member's keys in the account that are not revoked. */
export const listLiveKeysOf = (db: Executor, accountId: string, userId: string) =>
  db
    .selectFrom('account_api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();

export async function revokeKeys(db: Executor, ids: string[], revokedAt: string, reason: string): Promise<void> {
  await db
    .updateTable('account_api_keys')
    .set({ revoked_at: revokedAt, revoke_reason: reason })
    .where('id', 'in', ids)
    .execute();
}
