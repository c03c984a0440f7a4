import { badRequest, notFound } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import { LIVE, type AccountsDeps } from './context.js';
import * as store from './store/index.js';

export const ENTITLEMENT_TOPIC = 'accounts.entitlement';

/** Features an account can be entitled to. */
export const ENTITLEMENT_FEATURES: readonly string[] = ['ai'];

export function assertKnownFeature(feature: string): void {
  if (!ENTITLEMENT_FEATURES.includes(feature)) {
    throw badRequest(`unknown feature "${feature}" (known: ${ENTITLEMENT_FEATURES.join(', ')})`, [
      { field: 'feature', message: 'unknown feature', type: 'any.only' },
    ]);
  }
}

/** Feature entitlements of an account (e.g. ai), granted by the operator. */
export function createEntitlements(deps: AccountsDeps) {
  const { db, clock, changes } = deps.kernel;
  const audit = deps.audit.record;

  return {
    /** Grants or revokes a feature entitlement; visible to running servers at once. */
    async set(accountId: string, feature: string, granted: boolean, actorId: string | null = null) {
      assertKnownFeature(feature);
      await inTransaction(db, async (trx) => {
        const account = await store.findAccountStatus(trx, accountId);
        if (!account || !LIVE.includes(account.status)) throw notFound('Account');
        const at = clock.now();
        if (granted) {
          await store.grantEntitlement(trx, {
            account_id: accountId,
            feature,
            granted_at: at.toISOString(),
            granted_by: actorId,
          });
        } else {
          await store.revokeEntitlement(trx, accountId, feature);
        }
        await audit(trx, actorId ? { userId: actorId } : null, {
          accountId,
          action: granted ? 'account.entitlement_granted' : 'account.entitlement_revoked',
          targetId: accountId,
          metadata: { feature },
        });
        await changes.publish(trx, ENTITLEMENT_TOPIC, accountId);
      });
      return { accountId, feature, granted };
    },

    async list(accountId: string) {
      const rows = await store.listEntitlements(db, accountId);
      return rows.map((r) => ({ feature: r.feature, grantedAt: r.granted_at }));
    },
  };
}
