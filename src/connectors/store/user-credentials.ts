import type { Executor } from '../../db/tx.js';
import type { ConnectorUserCredentialsTable } from '../tables.js';

const T = 'connector_user_credentials';

/** Every SQL statement over connector_user_credentials (members' own links, per_user instances). */
export const userCredentialStore = {
  find: (ex: Executor, instanceId: string, userId: string) =>
    ex.selectFrom(T).selectAll().where('instance_id', '=', instanceId).where('user_id', '=', userId).executeTakeFirst(),
  delete: (ex: Executor, instanceId: string, userId: string) =>
    ex.deleteFrom(T).where('instance_id', '=', instanceId).where('user_id', '=', userId).execute(),
  /** Every member's link of an instance; returns how many went. */
  async deleteByInstance(ex: Executor, instanceId: string): Promise<number> {
    const res = await ex.deleteFrom(T).where('instance_id', '=', instanceId).executeTakeFirst();
    return Number(res.numDeletedRows);
  },

  /** A user's links on the instances of the given workspaces, with what their audit rows need. */
  listOfUserIn: (ex: Executor, userId: string, workspaceIds: readonly string[]) =>
    ex
      .selectFrom(T)
      .innerJoin('connector_instances', 'connector_instances.id', `${T}.instance_id`)
      .select([`${T}.id`, `${T}.instance_id`, `${T}.cred_type`, 'connector_instances.workspace_id'])
      .where(`${T}.user_id`, '=', userId)
      .where('connector_instances.workspace_id', 'in', workspaceIds)
      .execute(),
  deleteByIds: (ex: Executor, ids: readonly string[]) => ex.deleteFrom(T).where('id', 'in', ids).execute(),

  /** The user's link replaced by `row`, keeping its id and created_at; returns whether one existed. */
  async replace(
    ex: Executor,
    row: Omit<ConnectorUserCredentialsTable, 'id' | 'created_at'>,
    newId: string,
  ): Promise<{ id: string; replaced: boolean }> {
    const existing = await ex
      .selectFrom(T)
      .select(['id', 'created_at'])
      .where('instance_id', '=', row.instance_id)
      .where('user_id', '=', row.user_id)
      .executeTakeFirst();
    const id = existing?.id ?? newId;
    await ex.deleteFrom(T).where('instance_id', '=', row.instance_id).where('user_id', '=', row.user_id).execute();
    await ex
      .insertInto(T)
      .values({ ...row, id, created_at: existing?.created_at ?? row.rotated_at })
      .execute();
    return { id, replaced: !!existing };
  },

  /** The link must be made again (refresh refused, 401): kept for the member to see why, no longer used. */
  markRelink: (ex: Executor, id: string, reason: string) =>
    ex.updateTable(T).set({ relink_reason: reason, refresh_claim: null }).where('id', '=', id).execute(),

  /**
   * As credentialStore.claimDue, for members' OAuth links: one conditional UPDATE claims up
   * to `batch` due ones; links already waiting for a re-link are left out.
   */
  async claimDue(
    ex: Executor,
    claim: string,
    nowIso: string,
    dueBefore: string,
    claimedUntil: string,
    batch: number,
  ): Promise<number> {
    const due = ex
      .selectFrom(T)
      .select('id')
      .where('relink_reason', 'is', null)
      .where('cred_type', '=', 'oauth2')
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', dueBefore)
      .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', nowIso)]))
      .limit(batch);
    const res = await ex
      .updateTable(T)
      .set({ refresh_claim: claim, refresh_claimed_until: claimedUntil })
      .where('id', 'in', due)
      .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', nowIso)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  },

  claimed: (ex: Executor, claim: string) =>
    ex
      .selectFrom(T)
      .innerJoin('connector_instances', 'connector_instances.id', `${T}.instance_id`)
      .select([
        `${T}.id`,
        `${T}.instance_id`,
        `${T}.user_id`,
        `${T}.sealed_value`,
        `${T}.origin`,
        `${T}.scopes`,
        'connector_instances.connector_key',
        'connector_instances.workspace_id',
        'connector_instances.display_name',
      ])
      .where(`${T}.refresh_claim`, '=', claim)
      .execute(),

  /** Claims one usable link for a refresh now (a tool call's 401); false when another holds it. */
  async claimOne(ex: Executor, id: string, claim: string, nowIso: string, claimedUntil: string): Promise<boolean> {
    const res = await ex
      .updateTable(T)
      .set({ refresh_claim: claim, refresh_claimed_until: claimedUntil })
      .where('id', '=', id)
      .where('relink_reason', 'is', null)
      .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', nowIso)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /** New sealed values if nobody replaced them meanwhile (compare-and-set on the old ones). */
  async reseal(ex: Executor, id: string, from: string, to: string): Promise<boolean> {
    const res = await ex
      .updateTable(T)
      .set({ sealed_value: to })
      .where('id', '=', id)
      .where('sealed_value', '=', from)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  saveRefreshed: (
    ex: Executor,
    id: string,
    claim: string,
    patch: Pick<ConnectorUserCredentialsTable, 'sealed_value' | 'expires_at' | 'scopes' | 'rotated_at'>,
  ) =>
    ex
      .updateTable(T)
      .set({ ...patch, refresh_claim: null })
      .where('id', '=', id)
      .where('refresh_claim', '=', claim)
      .execute(),
};
