import type { Selectable } from 'kysely';
import { compiledStatement } from '../../db/compiled.js';
import type { Executor } from '../../db/tx.js';
import type { ConnectorCredentialsTable } from '../tables.js';

/** An instance's credential: read on every tool call, so compiled once (docs/kernel.md, Compiled statements). */
const credentialOf = compiledStatement<'instanceId', Selectable<ConnectorCredentialsTable>>((db, p) =>
  db.selectFrom('connector_credentials').selectAll().where('instance_id', '=', p('instanceId')),
);

/** Every SQL statement over connector_credentials. */
export const credentialStore = {
  find: (ex: Executor, instanceId: string) => credentialOf.first(ex, { instanceId }),
  delete: (ex: Executor, instanceId: string) =>
    ex.deleteFrom('connector_credentials').where('instance_id', '=', instanceId).execute(),

  /**
   * The instance's one credential row replaced by `row`: the old row's id and created_at are
   * kept, so the credential keeps its identity across rotations. Returns whether one existed.
   */
  async replace(
    ex: Executor,
    row: Omit<ConnectorCredentialsTable, 'id' | 'created_at'>,
    newId: string,
  ): Promise<{ id: string; replaced: boolean }> {
    const existing = await ex
      .selectFrom('connector_credentials')
      .select(['id', 'created_at'])
      .where('instance_id', '=', row.instance_id)
      .executeTakeFirst();
    const id = existing?.id ?? newId;
    await ex.deleteFrom('connector_credentials').where('instance_id', '=', row.instance_id).execute();
    await ex
      .insertInto('connector_credentials')
      .values({ ...row, id, created_at: existing?.created_at ?? row.rotated_at })
      .execute();
    return { id, replaced: !!existing };
  },

  /**
   * Claims up to `batch` OAuth credentials expiring before `dueBefore` with one conditional
   * UPDATE (a credential another process holds is skipped); instances in error are left out.
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
      .selectFrom('connector_credentials')
      .select('id')
      .where('instance_id', 'not in', ex.selectFrom('connector_instances').select('id').where('status', '=', 'error'))
      .where('cred_type', '=', 'oauth2')
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', dueBefore)
      .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', nowIso)]))
      .limit(batch);
    const res = await ex
      .updateTable('connector_credentials')
      .set({ refresh_claim: claim, refresh_claimed_until: claimedUntil })
      .where('id', 'in', due)
      .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', nowIso)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  },

  /** Claims one credential for a refresh now (a tool call's 401); false when another holds it. */
  async claimOne(ex: Executor, id: string, claim: string, nowIso: string, claimedUntil: string): Promise<boolean> {
    const res = await ex
      .updateTable('connector_credentials')
      .set({ refresh_claim: claim, refresh_claimed_until: claimedUntil })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', nowIso)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /** The credentials a claim holds, with what the refresh and its failure notice need of their instance. */
  claimed: (ex: Executor, claim: string) =>
    ex
      .selectFrom('connector_credentials')
      .innerJoin('connector_instances', 'connector_instances.id', 'connector_credentials.instance_id')
      .select([
        'connector_credentials.id',
        'connector_credentials.instance_id',
        'connector_credentials.sealed_value',
        'connector_credentials.origin',
        'connector_credentials.scopes',
        'connector_instances.connector_key',
        'connector_instances.workspace_id',
        'connector_instances.created_by',
        'connector_instances.display_name',
      ])
      .where('connector_credentials.refresh_claim', '=', claim)
      .execute(),

  /** Stores refreshed tokens if the claim still holds; refresh_claimed_until stays (see the refresh job). */
  saveRefreshed: (
    ex: Executor,
    id: string,
    claim: string,
    patch: Pick<ConnectorCredentialsTable, 'sealed_value' | 'expires_at' | 'scopes' | 'rotated_at'>,
  ) =>
    ex
      .updateTable('connector_credentials')
      .set({ ...patch, refresh_claim: null })
      .where('id', '=', id)
      .where('refresh_claim', '=', claim)
      .execute(),

  /** New sealed values if nobody replaced them meanwhile (compare-and-set on the old ones). */
  async reseal(ex: Executor, id: string, from: string, to: string): Promise<boolean> {
    const res = await ex
      .updateTable('connector_credentials')
      .set({ sealed_value: to })
      .where('id', '=', id)
      .where('sealed_value', '=', from)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /** Lets go of a claim but keeps the lease time. */
  releaseClaim: (ex: Executor, id: string, claim: string) =>
    ex
      .updateTable('connector_credentials')
      .set({ refresh_claim: null })
      .where('id', '=', id)
      .where('refresh_claim', '=', claim)
      .execute(),
};
