import { badRequest, conflict, forbidden, notFound } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Principal } from '../http/auth.js';
import type { Caller } from './access.js';
import { liveAccount, type AccountsDeps } from './context.js';
import { presentTransfer } from './presenters.js';
import { ANY_MEMBER, OWNER } from './roles.js';
import * as store from './store/index.js';

/**
 * Ownership transfer: the owner proposes an active member; that member accepts (becoming
 * owner, the previous owner becoming admin) or either side cancels. One pending at a time.
 */
export function createOwnership(deps: AccountsDeps) {
  const { db, clock } = deps.kernel;
  const audit = deps.audit.record;
  const { authorize } = deps.access;

  const pending = (executor: Executor, accountId: string) => store.findPendingTransfer(executor, accountId);

  return {
    async current(caller: Caller, accountId: string) {
      await authorize(caller, accountId, ANY_MEMBER);
      const row = await pending(db, accountId);
      if (!row) throw notFound('Pending ownership transfer');
      return presentTransfer(row);
    },

    /** A person's act: the operator has no ownership to give (nor to accept or cancel). */
    async propose(principal: Principal, accountId: string, toUserId: string) {
      const ownerId = (await authorize(principal, accountId, OWNER)).actor.userId;
      const row = await inTransaction(db, async (trx) => {
        const account = await liveAccount(trx, accountId);
        const owner = await store.findMember(trx, accountId, ownerId);
        if (!owner || owner.role !== 'owner') throw forbidden('Only the owner can transfer the ownership');
        if (toUserId === ownerId)
          throw badRequest('You already own this account', [{ field: 'chainerId', message: 'is the current owner' }]);
        const target = await store.findMember(trx, accountId, toUserId);
        if (!target || target.status !== 'active')
          throw badRequest('The new owner must be an active member of the account', [
            { field: 'chainerId', message: 'not an active member' },
          ]);
        if (await pending(trx, accountId)) throw conflict('An ownership transfer is already pending; cancel it first');
        const transfer = {
          id: newId(),
          account_id: accountId,
          from_user_id: ownerId,
          to_user_id: toUserId,
          status: 'pending',
          created_at: clock.now().toISOString(),
          decided_at: null,
        };
        await store.insertTransfer(trx, transfer);
        await audit(
          trx,
          { userId: ownerId },
          {
            accountId,
            action: 'ownership.transfer_proposed',
            targetId: toUserId,
            metadata: { transferId: transfer.id, fromChainerId: ownerId, toChainerId: toUserId },
          },
        );
        await deps.notifications.notify(trx, {
          userId: toUserId,
          title: `Ownership of ${account.display_name ?? account.legal_name}`,
          body: `You have been asked to become the owner of ${account.display_name ?? account.legal_name}. Accept it to take over.`,
          category: 'account',
          priority: 'high',
        });
        return transfer;
      });
      return presentTransfer(row);
    },

    async accept(principal: Principal, accountId: string) {
      const { userId } = (await authorize(principal, accountId, ANY_MEMBER)).actor;
      const row = await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const transfer = await pending(trx, accountId);
        if (!transfer) throw notFound('Pending ownership transfer');
        if (transfer.to_user_id !== userId) throw forbidden('Only the proposed new owner can accept the transfer');
        const previous = await store.findMember(trx, accountId, transfer.from_user_id);
        if (!previous || previous.role !== 'owner')
          throw conflict('The proposer is no longer the owner; the transfer is void');
        const now = clock.now().toISOString();
        await store.updateMember(trx, accountId, transfer.from_user_id, { role: 'admin' });
        await store.updateMember(trx, accountId, userId, { role: 'owner' });
        await store.joinDefaultWorkspace(trx, accountId, userId, 'admin', now);
        await store.decideTransfer(trx, transfer.id, 'accepted', now);
        await audit(
          trx,
          { userId },
          {
            accountId,
            action: 'ownership.transfer_accepted',
            targetId: userId,
            metadata: {
              transferId: transfer.id,
              fromChainerId: transfer.from_user_id,
              toChainerId: userId,
              previousOwnerRole: 'admin',
            },
          },
        );
        return { ...transfer, status: 'accepted', decided_at: now };
      });
      return presentTransfer(row);
    },

    /** The owner withdraws it, or the proposed owner declines it. */
    async cancel(principal: Principal, accountId: string) {
      const { userId } = (await authorize(principal, accountId, ANY_MEMBER)).actor;
      const row = await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const transfer = await pending(trx, accountId);
        if (!transfer) throw notFound('Pending ownership transfer');
        if (transfer.from_user_id !== userId && transfer.to_user_id !== userId)
          throw forbidden('Only the owner or the proposed new owner can cancel the transfer');
        const now = clock.now().toISOString();
        await store.decideTransfer(trx, transfer.id, 'cancelled', now);
        await audit(
          trx,
          { userId },
          {
            accountId,
            action: 'ownership.transfer_cancelled',
            targetId: transfer.to_user_id,
            metadata: { transferId: transfer.id, by: transfer.from_user_id === userId ? 'owner' : 'proposed_owner' },
          },
        );
        return { ...transfer, status: 'cancelled', decided_at: now };
      });
      return presentTransfer(row);
    },
  };
}
