import { conflict, notFound } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { IdentityService } from '../identity/service.js';
import { actorName, recordAudit } from '../audit/record.js';
import { createAccountAccess } from './access.js';
import { presentAccount } from './presenters.js';

export interface NewAccount {
  slug: string;
  legalName: string;
  displayName?: string | null;
  website?: string | null;
  industry?: string | null;
  billingEmail?: string | null;
  defaultTimezone?: string | null;
  avatarUrl?: string | null;
}

export const ENTITLEMENT_TOPIC = 'accounts.entitlement';

/** Accounts: the tenancy boundary. Owns accounts, members, workspaces, entitlements, audit. */
export function createAccountsService(kernel: Kernel, deps: { identity: IdentityService }) {
  const { db, clock, changes } = kernel;
  const access = createAccountAccess(db);

  async function actor(executor: Executor, userId: string) {
    return actorName(await deps.identity.getUser(userId, executor));
  }

  return {
    access,

    /** Creates an active account with its default workspace; the creator becomes its owner. */
    async create(ownerId: string, input: NewAccount) {
      return inTransaction(db, async (trx) => {
        if (await trx.selectFrom('accounts').select('id').where('slug', '=', input.slug).executeTakeFirst()) {
          throw conflict(`The slug "${input.slug}" is taken`);
        }
        const now = clock.now().toISOString();
        const id = newId();
        const row = {
          id,
          slug: input.slug,
          legal_name: input.legalName,
          display_name: input.displayName ?? null,
          status: 'active',
          website: input.website ?? null,
          industry: input.industry ?? null,
          billing_email: input.billingEmail ?? null,
          default_timezone: input.defaultTimezone ?? null,
          avatar_url: input.avatarUrl ?? null,
          account_type: 'organisation',
          created_by: ownerId,
          created_at: now,
          updated_at: now,
          deleted_at: null,
          purge_after: null,
        };
        await trx.insertInto('accounts').values(row).execute();
        await trx.insertInto('account_members').values({ account_id: id, user_id: ownerId, role: 'owner', status: 'active', invited_by: null, joined_at: now, created_at: now }).execute();
        const workspaceId = newId();
        await trx.insertInto('workspaces').values({ id: workspaceId, account_id: id, name: 'Default', is_default: 1, created_at: now, updated_at: now }).execute();
        await trx.insertInto('workspace_members').values({ workspace_id: workspaceId, user_id: ownerId, role: 'owner', created_at: now }).execute();
        await recordAudit(trx, { accountId: id, action: 'account.created', actorId: ownerId, actorUsername: await actor(trx, ownerId), targetId: id, metadata: { slug: input.slug }, at: clock.now() });
        return { ...presentAccount(row), accountType: row.account_type, defaultWorkspaceId: workspaceId, ownerChainerId: ownerId };
      });
    },

    /** Grants or revokes a feature entitlement (e.g. ai); visible to running servers at once. */
    async setEntitlement(accountId: string, feature: string, granted: boolean, actorId: string | null = null) {
      await inTransaction(db, async (trx) => {
        const account = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
        if (!account) throw notFound('Account');
        const at = clock.now();
        if (granted) {
          await trx.insertInto('account_entitlements').values({ account_id: accountId, feature, granted_at: at.toISOString(), granted_by: actorId }).onConflict((oc) => oc.doNothing()).execute();
        } else {
          await trx.deleteFrom('account_entitlements').where('account_id', '=', accountId).where('feature', '=', feature).execute();
        }
        await recordAudit(trx, {
          accountId,
          action: granted ? 'account.entitlement_granted' : 'account.entitlement_revoked',
          actorId: actorId ?? 'system',
          actorUsername: actorId ? await actor(trx, actorId) : 'system',
          targetId: accountId,
          metadata: { feature },
          at,
        });
        await changes.publish(trx, ENTITLEMENT_TOPIC, accountId);
      });
      return { accountId, feature, granted };
    },

    async listEntitlements(accountId: string) {
      const rows = await db.selectFrom('account_entitlements').select(['feature', 'granted_at']).where('account_id', '=', accountId).execute();
      return rows.map((r) => ({ feature: r.feature, grantedAt: r.granted_at }));
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
