import { badRequest, conflict, notFound } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Principal } from '../http/auth.js';
import { LIVE_STATUSES, restrictedTo, type Caller } from './access.js';
import { liveAccount, type AccountsDeps } from './context.js';
import { presentMember, presentWorkspace } from './presenters.js';
import { ANY_MEMBER, OWNER_OR_ADMIN, type Role, type WorkspaceRole } from './roles.js';
import * as store from './store/index.js';

/**
 * Change-feed topic, keyed by workspace id: the workspace was deleted (alone, or with its
 * account's purge), and with it, by cascade, what lived in it; caches of it can go.
 */
export const WORKSPACE_DELETED_TOPIC = 'accounts.workspace-deleted';

/**
 * Workspaces of an account: the default one (created with the account, never deleted) and
 * more, each with its own members; X-Workspace-Id selects one for workspace-scoped endpoints.
 */
export function createWorkspaces(deps: AccountsDeps) {
  const { db, clock } = deps.kernel;
  const audit = deps.audit.record;
  const { authorize } = deps.access;

  /** A workspace of the account; one the viewer (a user id, null: anyone) is not in reads as unknown. */
  async function find(executor: Executor, accountId: string, workspaceId: string, viewer: string | null = null) {
    const ws = await store.findWorkspace(executor, accountId, workspaceId);
    if (!ws) throw notFound('Workspace');
    if (viewer !== null && !(await store.isWorkspaceMember(executor, ws.id, viewer))) throw notFound('Workspace');
    return ws;
  }

  async function membersOf(accountId: string, workspaceId: string, viewer: string | null) {
    const ws = await find(db, accountId, workspaceId, viewer);
    const rows = await store.listWorkspaceMembers(db, accountId, ws.id);
    return rows.map((r) => ({
      workspaceId: ws.id,
      workspaceRole: r.workspace_role,
      addedAt: r.added_at,
      ...presentMember(r),
    }));
  }

  async function assertNameFree(executor: Executor, accountId: string, name: string, exceptId?: string) {
    if (await store.workspaceNameTaken(executor, accountId, name, exceptId))
      throw conflict(`A workspace named "${name}" already exists in this account`);
  }

  return {
    /** Owners and admins see every workspace of the account, other members only their own. */
    async list(caller: Caller, accountId: string) {
      const auth = await authorize(caller, accountId, ANY_MEMBER);
      const rows = await store.listWorkspaces(db, accountId, restrictedTo(auth));
      return rows.map(presentWorkspace);
    },

    /**
     * Every workspace the caller may use (as access.workspace decides) across the live accounts
     * where they are an active member, with the account's name: their own only, and an
     * account's API key only that account's (docs/oauth.md, Workspace binding).
     */
    async usable(caller: Principal) {
      const only = caller.kind === 'api_key' ? caller.accountId : null;
      const rows = await store.listUsableWorkspaces(db, caller.userId, LIVE_STATUSES, only);
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        account: { id: r.account_id, name: r.display_name ?? r.legal_name },
      }));
    },

    /** A new workspace; its creator (when a person) becomes its admin. */
    async create(caller: Caller, accountId: string, name: string) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      const row = await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        await assertNameFree(trx, accountId, name);
        const now = clock.now().toISOString();
        const ws = { id: newId(), account_id: accountId, name, is_default: 0, created_at: now, updated_at: now };
        await store.insertWorkspace(trx, ws);
        if (actor)
          await store.insertWorkspaceMember(trx, {
            workspace_id: ws.id,
            user_id: actor.userId,
            role: 'admin',
            created_at: now,
          });
        await audit(trx, actor, { accountId, action: 'workspace.created', targetId: ws.id, metadata: { name } });
        return ws;
      });
      return presentWorkspace(row);
    },

    async rename(caller: Caller, accountId: string, workspaceId: string, name: string) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      const row = await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const ws = await find(trx, accountId, workspaceId);
        if (ws.name === name) return ws;
        await assertNameFree(trx, accountId, name, ws.id);
        const now = clock.now().toISOString();
        await store.renameWorkspace(trx, ws.id, name, now);
        await audit(trx, actor, {
          accountId,
          action: 'workspace.renamed',
          targetId: ws.id,
          metadata: { oldValue: ws.name, newValue: name },
        });
        return { ...ws, name, updated_at: now };
      });
      return presentWorkspace(row);
    },

    /** Deletes a non-default workspace with its memberships (and, by cascade, what lives in it). */
    async remove(caller: Caller, accountId: string, workspaceId: string) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      const row = await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const ws = await find(trx, accountId, workspaceId);
        if (ws.is_default === 1) throw conflict('The default workspace cannot be deleted');
        await store.deleteWorkspace(trx, ws.id);
        await deps.kernel.changes.publish(trx, WORKSPACE_DELETED_TOPIC, ws.id);
        await audit(trx, actor, {
          accountId,
          action: 'workspace.deleted',
          targetId: ws.id,
          metadata: { name: ws.name },
        });
        return ws;
      });
      return presentWorkspace(row);
    },

    /** Members of a workspace the caller sees (as in list). */
    async listMembers(caller: Caller, accountId: string, workspaceId: string) {
      const auth = await authorize(caller, accountId, ANY_MEMBER);
      return membersOf(accountId, workspaceId, restrictedTo(auth));
    },

    /** Only active members of the account can join its workspaces. */
    async addMember(
      caller: Caller,
      accountId: string,
      workspaceId: string,
      input: { chainerId: string; role: WorkspaceRole },
    ) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const ws = await find(trx, accountId, workspaceId);
        const member = await store.findMember(trx, accountId, input.chainerId);
        if (!member || member.status !== 'active')
          throw badRequest('Only active members of the account can be added to its workspaces', [
            { field: 'chainerId', message: 'not an active member of the account' },
          ]);
        const already = await store.findWorkspaceMember(trx, ws.id, input.chainerId);
        if (already) throw conflict('This member already belongs to the workspace');
        await store.insertWorkspaceMember(trx, {
          workspace_id: ws.id,
          user_id: input.chainerId,
          role: input.role,
          created_at: clock.now().toISOString(),
        });
        await audit(trx, actor, {
          accountId,
          action: 'workspace.member_added',
          targetId: input.chainerId,
          metadata: { workspaceId: ws.id, role: input.role },
        });
      });
      const members = await membersOf(accountId, workspaceId, null);
      return members.find((m) => m.chainerId === input.chainerId)!;
    },

    async removeMember(caller: Caller, accountId: string, workspaceId: string, userId: string) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const ws = await find(trx, accountId, workspaceId);
        if ((await store.deleteWorkspaceMember(trx, ws.id, userId)) === 0) throw notFound('Workspace member');
        // An account owner or admin still reaches the workspace without the membership.
        const member = await store.findMember(trx, accountId, userId);
        if (!member || !OWNER_OR_ADMIN.includes(member.role as Role))
          for (const hook of deps.membershipEnded)
            await hook(trx, { accountId, userId, workspaceIds: [ws.id], by: actor });
        await audit(trx, actor, {
          accountId,
          action: 'workspace.member_removed',
          targetId: userId,
          metadata: { workspaceId: ws.id },
        });
      });
      return { workspaceId, chainerId: userId, removed: true };
    },
  };
}
