import { badRequest, conflict, notFound } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import type { Principal } from '../http/auth.js';
import { createAccountAccess, type Caller } from './access.js';
import { presentAccount, presentAccountSummary } from './presenters.js';
import { liveAccount, type AccountsDeps, type MembershipEndedHook } from './context.js';
import { createMembers, type BillingHolder } from './members.js';
import { createInvitations } from './invitations.js';
import { createWorkspaces } from './workspaces.js';
import { createOwnership } from './ownership.js';
import { createApiKeys } from './api-keys.js';
import { createDeletion } from './deletion.js';
import { createSeatReleases } from './seat-releases.js';
import type { BillingAdapter } from './billing.js';
import { createEntitlements } from './entitlements.js';
import { createApprovalSettings } from './approval-settings.js';
import { createAccountBody, updateAccountBody, validate } from './schemas.js';
import { ANY_MEMBER, OWNER_OR_ADMIN } from './roles.js';
import * as store from './store/index.js';

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

export interface AccountChanges extends Partial<NewAccount> {
  status?: string;
}

export { ENTITLEMENT_TOPIC, ENTITLEMENT_FEATURES, assertKnownFeature } from './entitlements.js';
export { WORKSPACE_DELETED_TOPIC } from './workspaces.js';
export { assertAssignableRole } from './members.js';

/** PATCH fields and their columns, in the order account.updated entries are written. */
const FIELDS: Array<
  [
    keyof NewAccount,
    (
      | 'slug'
      | 'legal_name'
      | 'display_name'
      | 'website'
      | 'industry'
      | 'billing_email'
      | 'default_timezone'
      | 'avatar_url'
    ),
  ]
> = [
  ['slug', 'slug'],
  ['legalName', 'legal_name'],
  ['displayName', 'display_name'],
  ['website', 'website'],
  ['industry', 'industry'],
  ['billingEmail', 'billing_email'],
  ['defaultTimezone', 'default_timezone'],
  ['avatarUrl', 'avatar_url'],
];

/** Accounts: the tenancy boundary. Owns accounts, members, workspaces, entitlements, audit. */
export function createAccountsService(
  kernel: Kernel,
  services: Omit<AccountsDeps, 'kernel' | 'access' | 'membershipEnded'>,
) {
  const { db, clock } = kernel;
  const access = createAccountAccess(db);
  const deps: AccountsDeps = { kernel, ...services, access, membershipEnded: [] };
  const audit = deps.audit.record;
  const billing: BillingHolder = { adapter: null };

  async function assertSlugFree(executor: Executor, slug: string, exceptId?: string) {
    const taken = await store.findAccountBySlug(executor, slug);
    if (taken && taken.id !== exceptId) throw conflict(`The slug "${slug}" is taken`);
  }

  const apiKeys = createApiKeys(deps);
  const entitlements = createEntitlements(deps);

  return {
    access,
    members: createMembers(deps, billing),
    invitations: createInvitations(deps),
    workspaces: createWorkspaces(deps),
    /** How tool-call approvals are decided: the owner's second-factor rule (docs/accounts.md). */
    approvalSettings: createApprovalSettings(deps),
    ownership: createOwnership(deps),
    apiKeys,
    apiKeyVerifier: apiKeys.verifier,
    deletion: createDeletion(deps),
    seatReleases: createSeatReleases(deps),

    /** Registers what else ends when a member's reach into workspaces ends (see MembershipEndedHook). */
    onMembershipEnded(hook: MembershipEndedHook): void {
      deps.membershipEnded.push(hook);
    },

    /** The billing provider seat releases go to; none by default (status billing_not_configured). */
    useBillingAdapter(adapter: BillingAdapter | null) {
      billing.adapter = adapter;
    },

    /** Creates an active account with its default workspace; the creator becomes its owner. */
    async create(ownerId: string, raw: NewAccount) {
      const input = validate<NewAccount>(createAccountBody, raw);
      return inTransaction(db, async (trx) => {
        if (!(await deps.identity.findUserById(ownerId, trx))) throw notFound('User');
        await assertSlugFree(trx, input.slug);
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
          status_before_close: null,
          deleted_by: null,
          hard_deleted_at: null,
          approvers_need_second_factor: 0,
        };
        await store.insertAccount(trx, row);
        await store.insertMember(trx, {
          account_id: id,
          user_id: ownerId,
          role: 'owner',
          status: 'active',
          invited_by: null,
          joined_at: now,
          created_at: now,
        });
        const workspaceId = newId();
        await store.insertWorkspace(trx, {
          id: workspaceId,
          account_id: id,
          name: 'Default',
          is_default: 1,
          created_at: now,
          updated_at: now,
        });
        await store.insertWorkspaceMember(trx, {
          workspace_id: workspaceId,
          user_id: ownerId,
          role: 'owner',
          created_at: now,
        });
        await audit(
          trx,
          { userId: ownerId },
          {
            accountId: id,
            action: 'account.created',
            targetId: id,
            metadata: { slug: input.slug, legalName: input.legalName },
          },
        );
        return {
          ...presentAccount(row),
          accountType: row.account_type,
          defaultWorkspaceId: workspaceId,
          ownerChainerId: ownerId,
        };
      });
    },

    /** The Account resource of a live account (read by code that already knows who may see it). */
    async get(accountId: string) {
      return presentAccount(await liveAccount(db, accountId));
    },

    /** The caller's current account: X-Account-Id when given, else their oldest membership. */
    async current(principal: Principal, headerAccountId: string | null) {
      const context = await access.current(principal, headerAccountId);
      return presentAccount(await liveAccount(db, context.accountId));
    },

    /** The operator's view: any status, with counts (CLI `account show`). */
    async show(accountId: string) {
      const row = await store.findAccount(db, accountId);
      if (!row) throw notFound('Account');
      const [members, workspaces] = await Promise.all([
        store.countMembers(db, accountId),
        store.workspaceIdsOf(db, accountId).execute(),
      ]);
      return {
        ...presentAccount(row),
        accountType: row.account_type,
        deletedAt: row.deleted_at,
        purgeAfter: row.purge_after,
        hardDeletedAt: row.hard_deleted_at,
        memberCount: members,
        workspaceCount: workspaces.length,
      };
    },

    /** The account as one of its members sees it, with their role. */
    async summary(principal: Principal, accountId: string) {
      const { context } = await access.authorize(principal, accountId, ANY_MEMBER);
      return presentAccountSummary(await liveAccount(db, accountId), context.role);
    },

    /** The accounts an operator's word names (CLI): its id or its slug, any status; two when they disagree. */
    lookup: async (ref: string) => (await store.findAccountsByIdOrSlug(db, ref.trim())).map(presentAccount),

    async list(options: { status?: string; limit?: number; offset?: number } = {}) {
      const rows = await store.listAccounts(db, {
        status: options.status,
        limit: options.limit ?? 500,
        offset: options.offset ?? 0,
      });
      return rows.map(presentAccount);
    },

    /**
     * PATCH /accounts/:id (and CLI suspend/activate). Status moves only active <-> suspended here;
     * closed, deletion_approved and hard_deleted belong to the deletion flow. One account.updated
     * entry per changed field (field, oldValue, newValue); status changes are account.suspended /
     * account.activated with the same metadata.
     */
    async update(caller: Caller, accountId: string, raw: AccountChanges) {
      const { actor: by } = await access.authorize(caller, accountId, OWNER_OR_ADMIN);
      const changesIn = validate<AccountChanges>(updateAccountBody, raw);
      if (changesIn.status !== undefined && changesIn.status !== 'active' && changesIn.status !== 'suspended') {
        throw badRequest(
          `status can only be set to active or suspended; ${changesIn.status} belongs to the account deletion flow (DELETE /accounts/:id)`,
          [{ field: 'status', message: 'only active or suspended', type: 'any.only' }],
        );
      }
      const row = await inTransaction(db, async (trx) => {
        const current = await liveAccount(trx, accountId);
        if (changesIn.slug !== undefined && changesIn.slug !== current.slug)
          await assertSlugFree(trx, changesIn.slug, accountId);
        const now = clock.now().toISOString();
        const set: Record<string, unknown> = {};
        for (const [field, column] of FIELDS) {
          const value = changesIn[field];
          if (value === undefined || value === current[column]) continue;
          set[column] = value;
          await audit(trx, by, {
            accountId,
            action: 'account.updated',
            targetId: accountId,
            metadata: { field, oldValue: current[column], newValue: value },
          });
        }
        if (changesIn.status !== undefined && changesIn.status !== current.status) {
          set.status = changesIn.status;
          await audit(trx, by, {
            accountId,
            action: changesIn.status === 'suspended' ? 'account.suspended' : 'account.activated',
            targetId: accountId,
            metadata: { field: 'status', oldValue: current.status, newValue: changesIn.status },
          });
        }
        if (Object.keys(set).length === 0) return current;
        set.updated_at = now;
        await store.updateAccount(trx, accountId, set);
        return { ...current, ...set } as typeof current;
      });
      return presentAccount(row);
    },

    /**
     * What another domain may show of an account (the AI prompt context): its names, industry
     * and timezone, with updated_at to version what it derives from them.
     */
    profile: (accountId: string) => store.findAccountProfile(db, accountId),

    /** The audit log, newest first, keyset-paged on seq. */
    async logs(caller: Caller, accountId: string, page: { limit: number; cursor?: string }) {
      await access.authorize(caller, accountId, OWNER_OR_ADMIN);
      return deps.audit.log(accountId, page);
    },

    setEntitlement: entitlements.set,
    listEntitlements: entitlements.list,
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
