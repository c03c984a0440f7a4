import { conflict, notFound } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import type { Caller, Operator } from './access.js';
import type { AccountsDeps } from './context.js';
import { OWNER } from './roles.js';
import { WORKSPACE_DELETED_TOPIC } from './workspaces.js';
import * as store from './store/index.js';

const DAY_MS = 24 * 3_600_000;

/**
 * Account deletion and retention. Status moves (docs/accounts.md):
 *   active | suspended --DELETE /accounts/:id (owner)--> closed (deletedAt set, purgeAfter = +retention)
 *   closed --`gantry account restore`, before purgeAfter--> the status it had before
 *   closed --`gantry account approve-deletion` (operator)--> deletion_approved (no restore, purged on the next run)
 *   closed past purgeAfter, or deletion_approved --retention job--> hard_deleted
 * A hard-deleted account keeps its row (id, status, dates) and its audit trail; members,
 * workspaces, invitations, keys, transfers and entitlements are purged, personal fields cleared
 * and the slug freed.
 */
export function createDeletion(deps: AccountsDeps) {
  const { db, clock, config } = deps.kernel;
  const audit = deps.audit.record;
  const { authorize } = deps.access;

  async function purge(accountId: string, now: Date): Promise<boolean> {
    return inTransaction(db, async (trx) => {
      const account = await store.findAccount(trx, accountId);
      if (!account) return false;
      const due =
        account.status === 'deletion_approved' ||
        (account.status === 'closed' && account.purge_after !== null && account.purge_after <= now.toISOString());
      if (!due) return false;
      const purged = await store.purgeAccountRows(trx, accountId);
      for (const id of purged.workspaceIds) await deps.kernel.changes.publish(trx, WORKSPACE_DELETED_TOPIC, id);
      await store.markHardDeleted(trx, accountId, now.toISOString());
      await audit(trx, null, {
        accountId,
        action: 'account.hard_deleted',
        targetId: accountId,
        metadata: {
          previousStatus: account.status,
          deletedAt: account.deleted_at,
          purgedMembers: purged.members,
          purgedWorkspaces: purged.workspaces,
        },
      });
      return true;
    });
  }

  return {
    retentionDays: config.accountRetentionDays,

    /** Soft delete by the owner: closed, restorable until purgeAfter. */
    async softDelete(caller: Caller, accountId: string) {
      const { actor: by } = await authorize(caller, accountId, OWNER);
      return inTransaction(db, async (trx) => {
        const account = await store.findAccount(trx, accountId);
        if (!account || (account.status !== 'active' && account.status !== 'suspended')) throw notFound('Account');
        const now = clock.now();
        const deletedAt = now.toISOString();
        const purgeAfter = new Date(now.getTime() + config.accountRetentionDays * DAY_MS).toISOString();
        await store.updateAccount(trx, accountId, {
          status: 'closed',
          status_before_close: account.status,
          deleted_at: deletedAt,
          purge_after: purgeAfter,
          deleted_by: by?.userId ?? 'system',
          updated_at: deletedAt,
        });
        await store.cancelPendingTransfers(trx, accountId, deletedAt);
        await audit(trx, by, {
          accountId,
          action: 'account.deleted',
          targetId: accountId,
          metadata: {
            previousStatus: account.status,
            deletedAt,
            purgeAfter,
            retentionDays: config.accountRetentionDays,
          },
        });
        return { id: accountId, deletedAt, purgeAfter };
      });
    },

    /**
     * The operator's only (the type says so; audited as 'system'), within the retention period;
     * the account returns to the status it had.
     */
    async restore(_operator: Operator, accountId: string) {
      return inTransaction(db, async (trx) => {
        const account = await store.findAccount(trx, accountId);
        if (!account) throw notFound('Account');
        if (account.status === 'deletion_approved' || account.status === 'hard_deleted')
          throw conflict(`The account is ${account.status}; it can no longer be restored`);
        if (account.status !== 'closed')
          throw conflict(`The account is ${account.status}, not deleted; there is nothing to restore`);
        const nowIso = clock.now().toISOString();
        if (account.purge_after !== null && account.purge_after <= nowIso)
          throw conflict(
            'The retention period has ended; the account is awaiting its purge and can no longer be restored',
          );
        const status = account.status_before_close ?? 'active';
        await store.updateAccount(trx, accountId, {
          status,
          status_before_close: null,
          deleted_at: null,
          purge_after: null,
          deleted_by: null,
          updated_at: nowIso,
        });
        await audit(trx, null, {
          accountId,
          action: 'account.restored',
          targetId: accountId,
          metadata: { status, deletedAt: account.deleted_at },
        });
        const row = await store.findAccount(trx, accountId);
        return row!;
      });
    },

    /** The operator confirms a closed account's deletion: no restore, purged on the next job run. */
    async approve(_operator: Operator, accountId: string) {
      return inTransaction(db, async (trx) => {
        const account = await store.findAccount(trx, accountId);
        if (!account) throw notFound('Account');
        if (account.status !== 'closed')
          throw conflict(
            `Only a closed (deleted) account can have its deletion approved; this one is ${account.status}`,
          );
        const nowIso = clock.now().toISOString();
        await store.updateAccount(trx, accountId, { status: 'deletion_approved', updated_at: nowIso });
        await audit(trx, null, {
          accountId,
          action: 'account.deletion_approved',
          targetId: accountId,
          metadata: { deletedAt: account.deleted_at },
        });
        return { id: accountId, status: 'deletion_approved' };
      });
    },

    purge,

    /** The accounts the retention job would hard-delete now (what `gantry account purge` asks about). */
    dueForPurge: (now: Date) => store.listDueForPurge(db, now.toISOString(), 500),

    /**
     * The retention job's body: every account due is hard-deleted, one transaction each. `only`
     * limits it to the accounts the operator was shown (each is checked again in its transaction).
     */
    async purgeDue(now: Date, only?: readonly string[]): Promise<string[]> {
      const due = only ?? (await store.listDueForPurge(db, now.toISOString(), 500)).map((a) => a.id);
      const purged: string[] = [];
      for (const id of due) if (await purge(id, now)) purged.push(id);
      return purged;
    },
  };
}
