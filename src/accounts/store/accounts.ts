import type { Insertable, Updateable } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { AccountsTable } from '../tables.js';

/** Every SQL statement over the accounts table and the account's entitlements. */

export const findAccount = (db: Executor, id: string) =>
  db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();

export const findAccountBySlug = (db: Executor, slug: string) =>
  db.selectFrom('accounts').select(['id']).where('slug', '=', slug).executeTakeFirst();

/** Accounts an operator's word names: by id, or by slug (a slug may be shaped like another account's id). */
export const findAccountsByIdOrSlug = (db: Executor, ref: string) =>
  db
    .selectFrom('accounts')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref)]))
    .orderBy('created_at')
    .execute();

export const findAccountStatus = (db: Executor, id: string) =>
  db.selectFrom('accounts').select(['id', 'status']).where('id', '=', id).executeTakeFirst();

export function listAccounts(db: Executor, options: { status?: string; limit: number; offset: number }) {
  let q = db.selectFrom('accounts').selectAll();
  if (options.status) q = q.where('status', '=', options.status);
  return q.orderBy('created_at').orderBy('id').limit(options.limit).offset(options.offset).execute();
}

export async function insertAccount(db: Executor, row: Insertable<AccountsTable>): Promise<void> {
  await db.insertInto('accounts').values(row).execute();
}

export async function updateAccount(db: Executor, id: string, set: Updateable<AccountsTable>): Promise<void> {
  await db.updateTable('accounts').set(set).where('id', '=', id).execute();
}

/** What the AI prompt context shows of an account; its updated_at versions the cached layers. */
export const findAccountProfile = (db: Executor, id: string) =>
  db
    .selectFrom('accounts')
    .select(['updated_at', 'display_name', 'legal_name', 'industry', 'default_timezone'])
    .where('id', '=', id)
    .executeTakeFirst();

export async function grantEntitlement(
  db: Executor,
  row: { account_id: string; feature: string; granted_at: string; granted_by: string | null },
): Promise<void> {
  await db
    .insertInto('account_entitlements')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function revokeEntitlement(db: Executor, accountId: string, feature: string): Promise<void> {
  await db
    .deleteFrom('account_entitlements')
    .where('account_id', '=', accountId)
    .where('feature', '=', feature)
    .execute();
}

export const listEntitlements = (db: Executor, accountId: string) =>
  db.selectFrom('account_entitlements').select(['feature', 'granted_at']).where('account_id', '=', accountId).execute();

export const findEntitlement = (db: Executor, accountId: string, feature: string) =>
  db
    .selectFrom('account_entitlements')
    .select('feature')
    .where('account_id', '=', accountId)
    .where('feature', '=', feature)
    .executeTakeFirst();
