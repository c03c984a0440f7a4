import type { Executor } from '../../db/tx.js';

/** Every SQL statement of account deletion and retention (over several accounts tables). */

/** Accounts due for the purge at `nowIso` (deletion approved, or closed past purgeAfter). */
export function listDueForPurge(db: Executor, nowIso: string, limit: number) {
  return db
    .selectFrom('accounts')
    .select(['id', 'slug', 'status'])
    .where((eb) =>
      eb.or([
        eb('status', '=', 'deletion_approved'),
        eb.and([eb('status', '=', 'closed'), eb('purge_after', '<=', nowIso)]),
      ]),
    )
    .orderBy('purge_after')
    .limit(limit)
    .execute();
}

/**
 * Deletes what an account holds: workspace memberships, workspaces, members, invitations, API
 * keys, ownership transfers and entitlements (its row and audit trail stay). Returns how many
 * members and workspaces went, and the workspaces' ids.
 */
export async function purgeAccountRows(
  trx: Executor,
  accountId: string,
): Promise<{ members: number; workspaces: number; workspaceIds: string[] }> {
  const workspaceIds = (
    await trx.selectFrom('workspaces').select('id').where('account_id', '=', accountId).execute()
  ).map((w) => w.id);
  if (workspaceIds.length > 0)
    await trx.deleteFrom('workspace_members').where('workspace_id', 'in', workspaceIds).execute();
  const workspaces = await trx.deleteFrom('workspaces').where('account_id', '=', accountId).executeTakeFirst();
  const members = await trx.deleteFrom('account_members').where('account_id', '=', accountId).executeTakeFirst();
  await trx.deleteFrom('account_invitations').where('account_id', '=', accountId).execute();
  await trx.deleteFrom('account_api_keys').where('account_id', '=', accountId).execute();
  await trx.deleteFrom('account_ownership_transfers').where('account_id', '=', accountId).execute();
  await trx.deleteFrom('account_entitlements').where('account_id', '=', accountId).execute();
  return { members: Number(members.numDeletedRows), workspaces: Number(workspaces.numDeletedRows), workspaceIds };
}

/** The hard-deleted row: personal fields cleared, the slug freed. */
export async function markHardDeleted(trx: Executor, accountId: string, nowIso: string): Promise<void> {
  await trx
    .updateTable('accounts')
    .set({
      status: 'hard_deleted',
      hard_deleted_at: nowIso,
      updated_at: nowIso,
      slug: `hard-deleted-${accountId}`,
      legal_name: 'Deleted account',
      display_name: null,
      website: null,
      industry: null,
      billing_email: null,
      default_timezone: null,
      avatar_url: null,
      purge_after: null,
    })
    .where('id', '=', accountId)
    .execute();
}
