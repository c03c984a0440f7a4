import { userPrincipal, type Principal } from '../http/auth.js';
import { DomainError } from '../http/errors.js';
import { isUuid } from '../lib/ids.js';

/**
 * What the consent page needs of the accounts service (reached only through it): who may use
 * which workspace, and the workspaces of an account a member sees.
 */
export interface WorkspaceDirectory {
  access: {
    workspace(
      principal: Principal,
      headers: { workspaceId?: string | null },
    ): Promise<{ accountId: string; role: string; workspaceId: string }>;
  };
  workspaces: {
    list(caller: Principal, accountId: string): Promise<Array<{ id: string; name: string }>>;
  };
}

export interface WorkspaceOptions {
  workspaces: Array<{ id: string; name: string }>;
  /** The user's default workspace (docs/interface.md, Current account and workspace): preselected. */
  selected: string;
}

const refusal = (err: unknown) => err instanceof DomainError && (err.status === 403 || err.status === 404);

/**
 * The workspace an MCP grant exposes (docs/oauth.md, Workspace binding): offered on the
 * consent page and checked when the form comes back.
 */
export function createWorkspaceChoice(directory: WorkspaceDirectory) {
  /** The default workspace of the user's current account; null when they belong to no account. */
  async function current(userId: string) {
    try {
      return await directory.access.workspace(userPrincipal(userId), {});
    } catch (err) {
      if (refusal(err)) return null;
      throw err;
    }
  }

  return {
    /** The workspaces of the user's current account that they see, the default preselected; null when none. */
    async options(userId: string): Promise<WorkspaceOptions | null> {
      const home = await current(userId);
      if (!home) return null;
      const listed = await directory.workspaces.list(userPrincipal(userId), home.accountId);
      const workspaces = listed.map((w) => ({ id: w.id, name: w.name }));
      if (!workspaces.some((w) => w.id === home.workspaceId))
        workspaces.unshift({ id: home.workspaceId, name: 'Default workspace' });
      return { workspaces, selected: home.workspaceId };
    },

    /** The posted workspace when the user may use it (a workspace they belong to, or their default); else null. */
    async check(userId: string, raw: string | undefined): Promise<string | null> {
      if (raw === undefined || !isUuid(raw)) return null;
      if ((await current(userId))?.workspaceId === raw) return raw;
      try {
        return (await directory.access.workspace(userPrincipal(userId), { workspaceId: raw })).workspaceId;
      } catch (err) {
        if (refusal(err)) return null;
        throw err;
      }
    },
  };
}

export type WorkspaceChoice = ReturnType<typeof createWorkspaceChoice>;
