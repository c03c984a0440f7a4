import { type Insertable, type Updateable } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { AccountMembersTable } from '../tables.js';

/**
 * Memberships made in the same millisecond: insertion order decides, not a random id. The
 * database numbers each row (migration 0020), the same on both engines.
 */
export const insertionOrder = 'account_members.seq' as const;

/** Every SQL statement over account memberships (account_members, read joined with users). */

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
  const row = await db
    .selectFrom('account_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The membership statuses that hold a paid seat: an invitation holds one (docs/accounts.md, Member). */
const SEAT_HOLDING = ['active', 'invited'];

/** The members a seat is billed for: what a seat release never lowers the quantity below. */
export async function countBilledMembers(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('account_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('status', 'in', SEAT_HOLDING)
    .executeTakeFirstOrThrow();
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

export async function insertMember(db: Executor, row: Insertable<AccountMembersTable>): Promise<void> {
  await db.insertInto('account_members').values(row).execute();
}

export async function updateMember(
  db: Executor,
  accountId: string,
  userId: string,
  set: Updateable<AccountMembersTable>,
): Promise<void> {
  await db
    .updateTable('account_members')
    .set(set)
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteMember(db: Executor, accountId: string, userId: string): Promise<void> {
  await db.deleteFrom('account_members').where('account_id', '=', accountId).where('user_id', '=', userId).execute();
}

/** Removes a membership only while it is an invitation's hold (`invited`). */
export async function deleteInvitedMember(db: Executor, accountId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('account_members')
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .where('status', '=', 'invited')
    .execute();
}

/** A user's membership with the account's status (access checks). */
export function findMembership(db: Executor, accountId: string, userId: string) {
  return db
    .selectFrom('account_members')
    .innerJoin('accounts', 'accounts.id', 'account_members.account_id')
    .select(['account_members.role', 'account_members.status', 'accounts.status as accountStatus'])
    .where('account_members.account_id', '=', accountId)
    .where('account_members.user_id', '=', userId)
    .executeTakeFirst();
}

/** The user's oldest active membership of an account with one of the statuses. */
export function findOldestMembership(db: Executor, userId: string, accountStatuses: readonly string[]) {
  return db
    .selectFrom('account_members')
    .innerJoin('accounts', 'accounts.id', 'account_members.account_id')
    .select(['account_members.account_id', 'account_members.role', 'accounts.status'])
    .where('account_members.user_id', '=', userId)
    .where('account_members.status', '=', 'active')
    .where('accounts.status', 'in', [...accountStatuses])
    .orderBy('account_members.created_at')
    .orderBy(insertionOrder)
    .executeTakeFirst();
}

export const listActiveMemberIds = (db: Executor, accountId: string) =>
  db
    .selectFrom('account_members')
    .select('user_id')
    .where('account_id', '=', accountId)
    .where('status', '=', 'active')
    .orderBy('created_at')
    .execute();

/**
 * What the AI prompt context shows of a user; its updated_at versions the cached layer. The
 * users table is identity's: this read moves to the identity service when that one offers it.
 */
