import type { Executor } from '../../db/tx.js';
import type { ConnectorOauthStatesTable } from '../tables.js';

/** Every SQL statement over connector_oauth_states (single-use linking states). */
export const oauthStateStore = {
  insert: (ex: Executor, row: ConnectorOauthStatesTable) =>
    ex.insertInto('connector_oauth_states').values(row).execute(),
  find: (ex: Executor, stateHash: string) =>
    ex.selectFrom('connector_oauth_states').selectAll().where('state_hash', '=', stateHash).executeTakeFirst(),

  /** Marks the state used if it was not yet: true for exactly one caller. */
  async consume(ex: Executor, stateHash: string, at: string): Promise<boolean> {
    const res = await ex
      .updateTable('connector_oauth_states')
      .set({ used_at: at })
      .where('state_hash', '=', stateHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /**
   * Holds a callback's code for confirmation: consumes the state (if it was not yet) and binds
   * it to the browser that finished it. True for exactly one caller.
   */
  async hold(ex: Executor, stateHash: string, heldCodeSealed: string, browserHash: string, at: string) {
    const res = await ex
      .updateTable('connector_oauth_states')
      .set({ used_at: at, held_code_sealed: heldCodeSealed, browser_hash: browserHash })
      .where('state_hash', '=', stateHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  /** Takes a held code out (completing, or discarding it): true for exactly one caller. */
  async releaseHeld(ex: Executor, stateHash: string): Promise<boolean> {
    const res = await ex
      .updateTable('connector_oauth_states')
      .set({ held_code_sealed: null })
      .where('state_hash', '=', stateHash)
      .where('held_code_sealed', 'is not', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  },

  async pruneBefore(ex: Executor, cutoff: string): Promise<number> {
    const res = await ex.deleteFrom('connector_oauth_states').where('expires_at', '<', cutoff).executeTakeFirst();
    return Number(res.numDeletedRows);
  },

  deleteByInstance: (ex: Executor, instanceId: string) =>
    ex.deleteFrom('connector_oauth_states').where('instance_id', '=', instanceId).execute(),
};
