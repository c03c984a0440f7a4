import { DomainError, forbidden, notFound } from '../http/errors.js';
import type { Principal } from '../http/auth.js';
import type { Executor } from '../db/tx.js';
import { OWNER_OR_ADMIN, type Role } from './roles.js';
import type { WorkspaceRole } from './roles.js';
import * as store from './store/index.js';

/** The account a request acts in, with the caller's role there. */
export interface AccountContext {
  accountId: string;
  role: Role;
  accountStatus: string;
}

/** The workspace a request acts in (connectors, AI runs), with its account context. */
export interface WorkspaceContext extends AccountContext {
  workspaceId: string;
  /**
   * The caller's role in the workspace: account owners and admins are admins of every
   * workspace; others have their workspace membership's role, or null when they reach the
   * account's default workspace without one (they may read it, not write).
   */
  workspaceRole: WorkspaceRole | null;
}

/** A stored workspace membership role as a WorkspaceRole; anything unknown reads only. */
function effectiveWorkspaceRole(accountRole: Role, stored: string | undefined): WorkspaceRole | null {
  if (accountRole === 'owner' || accountRole === 'admin') return 'admin';
  if (stored === undefined) return null;
  if (stored === 'owner' || stored === 'admin') return 'admin';
  return stored === 'member' ? 'member' : 'viewer';
}

/** The operator at the CLI: acts in any account without being a member; audited as 'system'. */
export const OPERATOR = Object.freeze({ kind: 'operator' as const });
export type Operator = typeof OPERATOR;

/** Who calls an accounts use case: a request's principal or the operator, never nobody. */
export type Caller = Principal | Operator;

/**
 * What a use case learns from `authorize`: who acts (for the audit) and, for a principal, the
 * account context it acts in. The operator acts as null (audit 'system') with no context.
 */
export type Authorized = { actor: { userId: string }; context: AccountContext } | { actor: null; context: null };

/**
 * The user whose own items (workspaces, API keys) are all a caller may see, or null when they
 * see the whole account: owners, admins and the operator.
 */
export function restrictedTo(auth: Authorized): string | null {
  return auth.context && !OWNER_OR_ADMIN.includes(auth.context.role) ? auth.actor.userId : null;
}

/** Accounts that are gone for their members (soft-deleted or purged) resolve as unknown. */
export const LIVE_STATUSES = ['active', 'suspended'];

/**
 * Who may act where: resolves the current account (X-Account-Id, else the oldest membership)
 * and workspace (X-Workspace-Id, else the account's default), and checks roles, the
 * suspension rule and entitlements. Every domain asks this instead of reading memberships.
 */
export function createAccountAccess(db: Executor) {
  async function membership(accountId: string, userId: string) {
    return store.findMembership(db, accountId, userId);
  }

  /**
   * A member's context in one account. Anyone who is not a member gets 403 whether or not the
   * id exists (docs/interface.md, Resources; a 404 would tell strangers which ids do); a member of a deleted account 404.
   */
  async function inAccount(principal: Principal, accountId: string): Promise<AccountContext> {
    if (principal.kind === 'api_key' && principal.accountId !== accountId)
      throw forbidden('This API key belongs to another account');
    const found = await membership(accountId, principal.userId);
    if (!found || found.status !== 'active') throw forbidden('You are not a member of this account');
    if (!LIVE_STATUSES.includes(found.accountStatus)) throw notFound('Account');
    return { accountId, role: found.role as Role, accountStatus: found.accountStatus };
  }

  /** The current account: X-Account-Id when given, else the caller's oldest active membership. */
  async function current(principal: Principal, headerAccountId?: string | null): Promise<AccountContext> {
    if (headerAccountId) return inAccount(principal, headerAccountId);
    if (principal.kind === 'api_key' && principal.accountId) return inAccount(principal, principal.accountId);
    const oldest = await store.findOldestMembership(db, principal.userId, LIVE_STATUSES);
    if (!oldest) throw notFound('Account (you are not a member of any account)');
    return { accountId: oldest.account_id, role: oldest.role as Role, accountStatus: oldest.status };
  }

  /**
   * The current workspace: X-Workspace-Id (the caller must belong to it: a workspace member,
   * or an owner/admin of its account), else the default workspace of the current account.
   */
  async function workspace(
    principal: Principal,
    headers: { accountId?: string | null; workspaceId?: string | null },
  ): Promise<WorkspaceContext> {
    if (headers.workspaceId) {
      // One statement for the workspace and both memberships; the rules are inAccount's, with
      // every refusal but a gone account answered as an unknown workspace.
      const ws = await store.findWorkspaceAccess(db, headers.workspaceId, principal.userId);
      if (!ws) throw notFound('Workspace');
      if (principal.kind === 'api_key' && principal.accountId !== ws.account_id) throw notFound('Workspace');
      if (ws.member_role === null || ws.member_status !== 'active') throw notFound('Workspace');
      if (!LIVE_STATUSES.includes(ws.account_status)) throw notFound('Account');
      const role = ws.member_role as Role;
      if (role !== 'owner' && role !== 'admin' && ws.workspace_role === null) throw notFound('Workspace');
      return {
        accountId: ws.account_id,
        role,
        accountStatus: ws.account_status,
        workspaceId: ws.id,
        workspaceRole: effectiveWorkspaceRole(role, ws.workspace_role ?? undefined),
      };
    }
    const account = await current(principal, headers.accountId);
    const ws = await store.defaultWorkspaceId(db, account.accountId);
    if (!ws) throw notFound('Workspace');
    const member = await workspaceMembership(ws.id, principal.userId);
    return { ...account, workspaceId: ws.id, workspaceRole: effectiveWorkspaceRole(account.role, member?.role) };
  }

  function requireRole(context: AccountContext, roles: readonly Role[]): void {
    if (!roles.includes(context.role)) throw forbidden(`This needs the ${roles.join(' or ')} role`);
  }

  /**
   * The first line of every accounts use case: a principal must be an active member of the
   * account (403, or 404 when the account is gone) with one of the roles (403). The operator
   * is not a member of anything and passes.
   */
  async function authorize(
    caller: Principal,
    accountId: string,
    roles: readonly Role[],
  ): Promise<Extract<Authorized, { context: AccountContext }>>;
  async function authorize(caller: Caller, accountId: string, roles: readonly Role[]): Promise<Authorized>;
  async function authorize(caller: Caller, accountId: string, roles: readonly Role[]): Promise<Authorized> {
    if (caller.kind === 'operator') return { actor: null, context: null };
    const context = await inAccount(caller, accountId);
    requireRole(context, roles);
    return { actor: { userId: caller.userId }, context };
  }

  async function workspaceMembership(workspaceId: string, userId: string) {
    return store.findWorkspaceMember(db, workspaceId, userId);
  }

  return {
    membership,
    inAccount,
    current,
    workspace,
    requireRole,
    authorize,

    /** Workspace roles (docs/accounts.md): a workspace viewer reads only, whatever their account role. */
    requireWorkspaceRole(context: WorkspaceContext, roles: readonly WorkspaceRole[]): void {
      if (!context.workspaceRole || !roles.includes(context.workspaceRole))
        throw forbidden(`This needs the ${roles.join(' or ')} role in this workspace`);
    },

    /** Suspended accounts refuse writes to their workspaces (reads still work). */
    assertWritable(context: AccountContext): void {
      if (context.accountStatus === 'suspended')
        throw new DomainError('ACCOUNT_SUSPENDED', 'The account is suspended; its workspaces are read-only');
    },

    /** Users with an active membership of a live account; null when the account is unknown or gone. */
    async activeMemberIds(accountId: string): Promise<string[] | null> {
      const account = await store.findAccountStatus(db, accountId);
      if (!account || !LIVE_STATUSES.includes(account.status)) return null;
      const rows = await store.listActiveMemberIds(db, accountId);
      return rows.map((r) => r.user_id);
    },

    /** The owner's setting: approvers of this account's tool calls must have a second factor (docs/accounts.md). */
    async approversNeedSecondFactor(accountId: string): Promise<boolean> {
      return (await store.findAccount(db, accountId))?.approvers_need_second_factor === 1;
    },

    async hasEntitlement(accountId: string, feature: string): Promise<boolean> {
      const row = await store.findEntitlement(db, accountId, feature);
      return !!row;
    },
  };
}

export type AccountAccess = ReturnType<typeof createAccountAccess>;

/** Reads the current-account and current-workspace headers (docs/interface.md, Current account and workspace). */
export function tenancyHeaders(headers: Record<string, string | string[] | undefined>): {
  accountId: string | null;
  workspaceId: string | null;
} {
  const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) ?? null;
  return { accountId: one(headers['x-account-id']), workspaceId: one(headers['x-workspace-id']) };
}
