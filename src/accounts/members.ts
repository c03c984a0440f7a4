import { badRequest, conflict, notFound } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Caller } from './access.js';
import { liveAccount, type AccountsDeps, type Actor } from './context.js';
import { presentApiKey, presentMember } from './presenters.js';
import { SEAT_RELEASE, type BillingAdapter } from './billing.js';
import { ANY_MEMBER, ASSIGNABLE_ROLES, OWNER_OR_ADMIN, type AssignableRole } from './roles.js';
import * as store from './store/index.js';

/** Roles a member may be given directly; owner moves only through ownership transfer. */
export function assertAssignableRole(role: string): asserts role is AssignableRole {
  if (!(ASSIGNABLE_ROLES as readonly string[]).includes(role)) {
    throw badRequest(`unknown role "${role}" (assignable: ${ASSIGNABLE_ROLES.join(', ')})`, [
      { field: 'role', message: 'not an assignable role', type: 'any.only' },
    ]);
  }
}

export interface BillingHolder {
  adapter: BillingAdapter | null;
}

/** Members of an account: list, add an existing user, change role, remove (with side effects). */
export function createMembers(deps: AccountsDeps, billing: BillingHolder) {
  const { db, clock } = deps.kernel;
  const audit = deps.audit.record;
  const { authorize } = deps.access;

  async function requireMember(executor: Executor, accountId: string, userId: string) {
    const member = await store.findMember(executor, accountId, userId);
    if (!member) throw notFound('Member');
    return member;
  }

  /** Attaches an existing user as an active member, in the default workspace, told in-app. */
  async function attach(
    trx: Executor,
    actor: Actor,
    accountId: string,
    input: { chainerId: string; role: AssignableRole },
  ) {
    const account = await liveAccount(trx, accountId);
    const user = await deps.identity.findUserById(input.chainerId, trx);
    if (!user) throw notFound('User');
    if (await store.findMember(trx, accountId, user.id))
      throw conflict('This user is already a member of the account (or invited to it)');
    const now = clock.now().toISOString();
    await store.insertMember(trx, {
      account_id: accountId,
      user_id: user.id,
      role: input.role,
      status: 'active',
      invited_by: actor?.userId ?? null,
      joined_at: null,
      created_at: now,
    });
    await store.joinDefaultWorkspace(trx, accountId, user.id, 'member', now);
    await audit(trx, actor, {
      accountId,
      action: 'member.added',
      targetId: user.id,
      metadata: { role: input.role },
    });
    await deps.notifications.notify(trx, {
      userId: user.id,
      title: `You were added to ${account.display_name ?? account.legal_name}`,
      body: `You are now a member of ${account.display_name ?? account.legal_name} with the ${input.role} role.`,
      category: 'account',
    });
    return requireMember(trx, accountId, user.id);
  }

  return {
    async list(caller: Caller, accountId: string, limit: number, offset: number) {
      await authorize(caller, accountId, ANY_MEMBER);
      const [rows, total] = await Promise.all([
        store.listMembers(db, accountId, limit, offset),
        store.countMembers(db, accountId),
      ]);
      return { items: rows.map(presentMember), total };
    },

    async get(accountId: string, userId: string) {
      return presentMember(await requireMember(db, accountId, userId));
    },

    /**
     * Attaches an existing user directly (not an invitation): active at once, in the default
     * workspace, told in-app. The user never gave this account their address, so the answer,
     * the member views and the audit entry do not carry it (`joinedAt` stays null: they were
     * attached, they did not join); docs/accounts.md, Members added by id.
     */
    async add(caller: Caller, accountId: string, input: { chainerId: string; role: AssignableRole }) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      assertAssignableRole(input.role);
      return presentMember(await inTransaction(db, (trx) => attach(trx, actor, accountId, input)));
    },

    /**
     * The operator's add inside the caller's transaction: a user made just in time by single
     * sign-on and their membership commit together or not at all (docs/identity-providers.md).
     */
    async addInTransaction(trx: Executor, accountId: string, input: { chainerId: string; role: AssignableRole }) {
      assertAssignableRole(input.role);
      return presentMember(await attach(trx, null, accountId, input));
    },

    /** Assignable roles only (owner moves through ownership transfer); the last owner keeps the role. */
    async changeRole(caller: Caller, accountId: string, userId: string, role: AssignableRole) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      const member = await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const current = await requireMember(trx, accountId, userId);
        if (current.role === role) return current;
        if (current.role === 'owner' && (await store.countOwners(trx, accountId)) <= 1) {
          throw conflict('The last owner cannot be demoted; transfer the ownership first');
        }
        await store.updateMember(trx, accountId, userId, { role });
        await audit(trx, actor, {
          accountId,
          action: 'member.role_changed',
          targetId: userId,
          metadata: { oldRole: current.role, newRole: role },
        });
        return { ...current, role };
      });
      return presentMember(member);
    },

    /**
     * Removes a member: revokes the enterprise API keys they own here, removes their workspace
     * memberships in this account, cancels their pending invitation and ownership transfer, and
     * when asked (the literal true) releases their billing seat. It ends this account's reach
     * only: sign-in sessions and third-party grants belong to the user, not to an account, and
     * reach an account only through the membership that every request reads afresh, so
     * deleting it shuts them all out of this account at once while the user's other accounts
     * keep working (docs/accounts.md, Member removal). No session is ended (`revokedSessions` 0).
     */
    async remove(caller: Caller, accountId: string, userId: string, options: { releaseSeat: boolean }) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      const outcome = await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const member = await requireMember(trx, accountId, userId);
        if (member.role === 'owner' && (await store.countOwners(trx, accountId)) <= 1) {
          throw conflict('The last owner cannot be removed; transfer the ownership first');
        }
        const now = clock.now().toISOString();
        const keys = await store.listLiveKeysOf(trx, accountId, userId);
        if (keys.length > 0) {
          await store.revokeKeys(
            trx,
            keys.map((k) => k.id),
            now,
            'member_removed',
          );
        }
        // Owners and admins reach every workspace without a membership row: all of them end.
        const workspaceIds = await store.listWorkspaceIds(trx, accountId);
        for (const hook of deps.membershipEnded) await hook(trx, { accountId, userId, workspaceIds, by: actor });
        const removedWorkspaceMemberships = await store.removeWorkspaceMemberships(trx, accountId, userId);
        await store.deleteMember(trx, accountId, userId);
        await store.revokePendingInvitationsTo(trx, accountId, member.email, now);
        await store.cancelPendingTransfers(trx, accountId, now, userId);
        let release: { id: string; status: string } | null = null;
        if (options.releaseSeat) {
          release = { id: newId(), status: billing.adapter ? SEAT_RELEASE.pending : SEAT_RELEASE.notConfigured };
          await store.insertSeatRelease(trx, {
            id: release.id,
            account_id: accountId,
            user_id: userId,
            status: release.status,
            requested_by: actor?.userId ?? null,
            created_at: now,
            confirmed_at: null,
          });
        }
        await audit(trx, actor, {
          accountId,
          action: 'member.removed',
          targetId: userId,
          metadata: {
            role: member.role,
            email: presentMember(member).email,
            revokedApiKeys: keys.map((k) => k.id),
            removedWorkspaceMemberships,
            revokedSessions: 0,
            releaseSeat: options.releaseSeat,
            seatReleaseId: release?.id ?? null,
          },
        });
        return { member, keys, removedWorkspaceMemberships, release };
      });

      let seatStatus: string = SEAT_RELEASE.notRequested;
      if (outcome.release) {
        seatStatus = outcome.release.status;
        if (billing.adapter)
          seatStatus = await requestRelease(billing.adapter, accountId, actor, userId, outcome.release.id);
      }
      return {
        ...presentMember(outcome.member),
        revokedApiKeys: outcome.keys.map((k) => {
          const { id, name, keyPrefix, lastFour } = presentApiKey(k);
          return { id, name, keyPrefix, lastFour };
        }),
        removedWorkspaceMemberships: outcome.removedWorkspaceMemberships,
        revokedSessions: 0,
        seatRelease: { status: seatStatus },
      };
    },
  };

  /** Asks the provider after the removal committed (network I/O outside the transaction). */
  async function requestRelease(
    adapter: BillingAdapter,
    accountId: string,
    actor: Actor,
    userId: string,
    releaseId: string,
  ): Promise<string> {
    let status: string;
    try {
      // Counted by the provider inside its queue for the seat item, after earlier releases
      // finished: a count taken here could be stale by then (docs/billing.md, Seat releases).
      const billedMembers = () => store.countBilledMembers(db, accountId);
      const answer = await adapter.releaseSeat({ releaseId, accountId, userId, billedMembers });
      status = answer.accepted ? SEAT_RELEASE.requested : answer.reason;
    } catch (err) {
      deps.kernel.logger.warn('seat release request failed', {
        accountId,
        releaseId,
        provider: adapter.name,
        error: (err as Error).message,
      });
      status = SEAT_RELEASE.providerError;
    }
    await inTransaction(db, async (trx) => {
      await store.setSeatReleaseStatus(trx, releaseId, status);
      await audit(trx, actor, {
        accountId,
        action: 'seat.release_requested',
        targetId: userId,
        metadata: { releaseId, provider: adapter.name, status },
      });
    });
    return status;
  }
}
