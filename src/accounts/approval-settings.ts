import { inTransaction } from '../db/tx.js';
import type { Caller } from './access.js';
import { liveAccount, type AccountsDeps } from './context.js';
import { OWNER, OWNER_OR_ADMIN } from './roles.js';
import * as store from './store/index.js';

/**
 * How an account's tool-call approvals are decided (docs/accounts.md, Approval settings). Kept
 * apart from the Account resource, whose fields the interface fixes. One setting so far:
 * approvers (owners and admins) must have a second factor; the step-up rule itself is the
 * connectors domain's (src/connectors/approver-proof.ts).
 */
export function createApprovalSettings(deps: AccountsDeps) {
  const { db, clock } = deps.kernel;
  const present = (row: { approvers_need_second_factor: number; updated_at: string }) => ({
    requireApproverSecondFactor: row.approvers_need_second_factor === 1,
    updatedAt: row.updated_at,
  });

  return {
    /** Owners and admins (the approvers) read it. */
    async get(caller: Caller, accountId: string) {
      await deps.access.authorize(caller, accountId, OWNER_OR_ADMIN);
      return present(await liveAccount(db, accountId));
    },

    /**
     * Only the owner changes it: the rule binds the admins, who must not lift it for
     * themselves. Audited as account.updated with the field, old and new value.
     */
    async set(caller: Caller, accountId: string, requireApproverSecondFactor: boolean) {
      const { actor } = await deps.access.authorize(caller, accountId, OWNER);
      return inTransaction(db, async (trx) => {
        const current = await liveAccount(trx, accountId);
        const was = current.approvers_need_second_factor === 1;
        if (was === requireApproverSecondFactor) return present(current);
        const now = clock.now().toISOString();
        const next = { approvers_need_second_factor: requireApproverSecondFactor ? 1 : 0, updated_at: now };
        await store.updateAccount(trx, accountId, next);
        await deps.audit.record(trx, actor, {
          accountId,
          action: 'account.updated',
          targetId: accountId,
          metadata: { field: 'requireApproverSecondFactor', oldValue: was, newValue: requireApproverSecondFactor },
        });
        return present({ ...current, ...next });
      });
    },
  };
}
