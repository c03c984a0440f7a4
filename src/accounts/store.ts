import type { Executor } from '../db/tx.js';

/** Every SQL statement over the accounts core tables (accounts, members, workspaces). */

export const findAccount = (db: Executor, id: string) => db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();

export const findAccountBySlug = (db: Executor, slug: string) => db.selectFrom('accounts').select(['id']).where('slug', '=', slug).executeTakeFirst();

export function listAccounts(db: Executor, options: { status?: string; limit: number; offset: number }) {
  let q = db.selectFrom('accounts').selectAll();
  if (options.status) q = q.where('status', '=', options.status);
  return q.orderBy('created_at').orderBy('id').limit(options.limit).offset(options.offset).execute();
}

/** A member as every member query reads it (account membership joined with the user). */
export const memberColumns = [
  'account_members.account_id',
  'account_members.user_id',
  'account_members.role',
  'account_members.status',
  'account_members.invited_by',
  'account_members.joined_at',
  'account_members.created_at',
  'users.email',
  'users.full_name',
  'users.username',
  'users.avatar_url',
] as const;

export type MemberRow = Awaited<ReturnType<typeof findMember>> & object;

export function findMember(db: Executor, accountId: string, userId: string) {
  return db
    .selectFrom('account_members')
    .innerJoin('users', 'users.id', 'account_members.user_id')
    .select(memberColumns)
    .where('account_members.account_id', '=', accountId)
    .where('account_members.user_id', '=', userId)
    .executeTakeFirst();
}

export function listMembers(db: Executor, accountId: string, limit: number, offset: number) {
  return db
    .selectFrom('account_members')
    .innerJoin('users', 'users.id', 'account_members.user_id')
    .select(memberColumns)
    .where('account_members.account_id', '=', accountId)
    .orderBy('account_members.created_at')
    .orderBy('account_members.user_id')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countMembers(db: Executor, accountId: string): Promise<number> {
  const row = await db.selectFrom('account_members').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countOwners(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('account_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export const defaultWorkspace = (db: Executor, accountId: string) =>
  db.selectFrom('workspaces').selectAll().where('account_id', '=', accountId).where('is_default', '=', 1).executeTakeFirst();

export const workspaceIdsOf = (db: Executor, accountId: string) => db.selectFrom('workspaces').select('id').where('account_id', '=', accountId);

/** Removes a user from every workspace of an account; returns how many memberships went. */
export async function removeWorkspaceMemberships(db: Executor, accountId: string, userId: string): Promise<number> {
  const result = await db.deleteFrom('workspace_members').where('user_id', '=', userId).where('workspace_id', 'in', workspaceIdsOf(db, accountId)).executeTakeFirst();
  return Number(result.numDeletedRows);
}
