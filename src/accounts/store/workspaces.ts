import { type Insertable, sql } from 'kysely';
import { compiledStatement } from '../../db/compiled.js';
import type { Executor } from '../../db/tx.js';
import type { WorkspacesTable } from '../tables.js';
import { OWNER_OR_ADMIN } from '../roles.js';
import { insertionOrder, memberColumns } from './members.js';

/** Every SQL statement over workspaces and their memberships. */

export const defaultWorkspaceId = (db: Executor, accountId: string) =>
  db
    .selectFrom('workspaces')
    .select('id')
    .where('account_id', '=', accountId)
    .where('is_default', '=', 1)
    .executeTakeFirst();

export const workspaceIdsOf = (db: Executor, accountId: string) =>
  db.selectFrom('workspaces').select('id').where('account_id', '=', accountId);

export const listWorkspaceIds = async (db: Executor, accountId: string) =>
  (await workspaceIdsOf(db, accountId).execute()).map((r) => r.id);

export const findWorkspace = (db: Executor, accountId: string, workspaceId: string) =>
  db
    .selectFrom('workspaces')
    .selectAll()
    .where('id', '=', workspaceId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();

/** A workspace by id alone, with its account (X-Workspace-Id resolution). */
/** Whether another workspace of the account has the name, compared case-insensitively. */
export async function workspaceNameTaken(
  db: Executor,
  accountId: string,
  name: string,
  exceptId?: string,
): Promise<boolean> {
  let q = db
    .selectFrom('workspaces')
    .select('id')
    .where('account_id', '=', accountId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()));
  if (exceptId) q = q.where('id', '!=', exceptId);
  return !!(await q.executeTakeFirst());
}

/** The account's workspaces, default first; only those the user belongs to when `memberId` is given. */
export function listWorkspaces(db: Executor, accountId: string, memberId: string | null) {
  let q = db.selectFrom('workspaces').selectAll('workspaces').where('workspaces.account_id', '=', accountId);
  if (memberId !== null)
    q = q
      .innerJoin('workspace_members', 'workspace_members.workspace_id', 'workspaces.id')
      .where('workspace_members.user_id', '=', memberId);
  return q.orderBy('workspaces.is_default', 'desc').orderBy('workspaces.created_at').orderBy('workspaces.id').execute();
}

/**
 * The workspaces a user may use across the accounts (with one of the statuses) where they are an
 * active member, as access.workspace allows them: every workspace of an account they own or
 * administer, else those they belong to and the account's default. Accounts oldest membership
 * first (the current account leads), each default workspace first; `accountId` keeps one account.
 */
export function listUsableWorkspaces(
  db: Executor,
  userId: string,
  accountStatuses: readonly string[],
  accountId: string | null,
) {
  let q = db
    .selectFrom('workspaces')
    .innerJoin('account_members', (join) =>
      join.onRef('account_members.account_id', '=', 'workspaces.account_id').on('account_members.user_id', '=', userId),
    )
    .innerJoin('accounts', 'accounts.id', 'workspaces.account_id')
    .select([
      'workspaces.id',
      'workspaces.name',
      'workspaces.is_default',
      'accounts.id as account_id',
      'accounts.display_name',
      'accounts.legal_name',
    ])
    .where('account_members.status', '=', 'active')
    .where('accounts.status', 'in', [...accountStatuses])
    .where((eb) =>
      eb.or([
        eb('account_members.role', 'in', [...OWNER_OR_ADMIN]),
        eb('workspaces.is_default', '=', 1),
        eb.exists(
          eb
            .selectFrom('workspace_members')
            .select('workspace_members.user_id')
            .whereRef('workspace_members.workspace_id', '=', 'workspaces.id')
            .where('workspace_members.user_id', '=', userId),
        ),
      ]),
    );
  if (accountId !== null) q = q.where('workspaces.account_id', '=', accountId);
  return q
    .orderBy('account_members.created_at')
    .orderBy(insertionOrder)
    .orderBy('workspaces.is_default', 'desc')
    .orderBy('workspaces.created_at')
    .orderBy('workspaces.id')
    .execute();
}

export async function insertWorkspace(db: Executor, row: Insertable<WorkspacesTable>): Promise<void> {
  await db.insertInto('workspaces').values(row).execute();
}

export async function renameWorkspace(
  db: Executor,
  workspaceId: string,
  name: string,
  updatedAt: string,
): Promise<void> {
  await db.updateTable('workspaces').set({ name, updated_at: updatedAt }).where('id', '=', workspaceId).execute();
}

/** Deletes a workspace and its memberships. */
export async function deleteWorkspace(db: Executor, workspaceId: string): Promise<void> {
  await db.deleteFrom('workspace_members').where('workspace_id', '=', workspaceId).execute();
  await db.deleteFrom('workspaces').where('id', '=', workspaceId).execute();
}

export const findWorkspaceMember = (db: Executor, workspaceId: string, userId: string) =>
  db
    .selectFrom('workspace_members')
    .select('role')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();

export const isWorkspaceMember = (db: Executor, workspaceId: string, userId: string) =>
  db
    .selectFrom('workspace_members')
    .select('user_id')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();

/** Members of a workspace with their account membership and user. */
export function listWorkspaceMembers(db: Executor, accountId: string, workspaceId: string) {
  return db
    .selectFrom('workspace_members')
    .innerJoin('account_members', (join) =>
      join
        .onRef('account_members.user_id', '=', 'workspace_members.user_id')
        .on('account_members.account_id', '=', accountId),
    )
    .innerJoin('users', 'users.id', 'workspace_members.user_id')
    .select([...memberColumns, 'workspace_members.role as workspace_role', 'workspace_members.created_at as added_at'])
    .where('workspace_members.workspace_id', '=', workspaceId)
    .orderBy('workspace_members.created_at')
    .orderBy('workspace_members.user_id')
    .execute();
}

export async function insertWorkspaceMember(
  db: Executor,
  row: { workspace_id: string; user_id: string; role: string; created_at: string },
): Promise<void> {
  await db.insertInto('workspace_members').values(row).execute();
}

/**
 * Makes the user a member of the account's default workspace with `role`, in one statement;
 * a membership the user already has there is kept as it is, and an account without a default
 * workspace is left alone.
 */
export async function joinDefaultWorkspace(
  db: Executor,
  accountId: string,
  userId: string,
  role: string,
  at: string,
): Promise<void> {
  await db
    .insertInto('workspace_members')
    .columns(['workspace_id', 'user_id', 'role', 'created_at'])
    .expression(
      db
        .selectFrom('workspaces')
        .select([
          'id',
          sql<string>`cast(${userId} as text)`.as('user_id'),
          sql<string>`cast(${role} as text)`.as('role'),
          sql<string>`cast(${at} as text)`.as('created_at'),
        ])
        .where('account_id', '=', accountId)
        .where('is_default', '=', 1),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Returns how many memberships went (0 or 1). */
export async function deleteWorkspaceMember(db: Executor, workspaceId: string, userId: string): Promise<number> {
  const result = await db
    .deleteFrom('workspace_members')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Removes a user from every workspace of an account; returns how many memberships went. */
export async function removeWorkspaceMemberships(db: Executor, accountId: string, userId: string): Promise<number> {
  const result = await db
    .deleteFrom('workspace_members')
    .where('user_id', '=', userId)
    .where('workspace_id', 'in', workspaceIdsOf(db, accountId))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** What access.workspace needs to know of a workspace and one user, in one statement. */
interface WorkspaceAccessRow {
  id: string;
  account_id: string;
  account_status: string;
  /** The user's account membership (null: none). */
  member_role: string | null;
  member_status: string | null;
  /** The user's workspace membership role (null: none). */
  workspace_role: string | null;
}

/**
 * A workspace with its account's status and the user's two memberships (the account's and the
 * workspace's): the three lookups of every workspace-scoped request (the MCP gateway's calls
 * among them) as one statement, compiled once (docs/kernel.md, Compiled statements).
 */
const workspaceAccessStatement = compiledStatement<'workspaceId' | 'userId', WorkspaceAccessRow>((db, p) =>
  db
    .selectFrom('workspaces as w')
    .innerJoin('accounts as a', 'a.id', 'w.account_id')
    .leftJoin('account_members as am', (join) =>
      join.onRef('am.account_id', '=', 'w.account_id').on('am.user_id', '=', p('userId')),
    )
    .leftJoin('workspace_members as wm', (join) =>
      join.onRef('wm.workspace_id', '=', 'w.id').on('wm.user_id', '=', p('userId')),
    )
    .select([
      'w.id',
      'w.account_id',
      'a.status as account_status',
      'am.role as member_role',
      'am.status as member_status',
      'wm.role as workspace_role',
    ])
    .where('w.id', '=', p('workspaceId')),
);
export const findWorkspaceAccess = (db: Executor, workspaceId: string, userId: string) =>
  workspaceAccessStatement.first(db, { workspaceId, userId });
