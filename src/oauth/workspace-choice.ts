import { userPrincipal, type Principal } from '../http/auth.js';
import { DomainError } from '../http/errors.js';
import { isUuid } from '../lib/ids.js';

/**
 * What the consent page needs of the accounts service (reached only through it): who may use
 * which workspace, and every workspace a user may use, across their accounts.
 */
export interface WorkspaceDirectory {
  access: {
    workspace(
      principal: Principal,
      headers: { workspaceId?: string | null },
    ): Promise<{ accountId: string; role: string; workspaceId: string }>;
  };
  workspaces: {
    usable(caller: Principal): Promise<Array<{ id: string; name: string; account: { id: string; name: string } }>>;
  };
}

/** The workspaces of one account, under its name. */
interface AccountWorkspaces {
  account: string;
  workspaces: Array<{ id: string; name: string }>;
}

export interface WorkspaceOptions {
  /** One group per account, the current account first. */
  accounts: AccountWorkspaces[];
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
    /**
     * Every workspace the user may use, grouped by account, the default workspace of their
     * current account preselected; null when they belong to no account.
     */
    async options(userId: string): Promise<WorkspaceOptions | null> {
      const home = await current(userId);
      if (!home) return null;
      const groups = new Map<string, AccountWorkspaces>();
      for (const w of await directory.workspaces.usable(userPrincipal(userId))) {
        const group = groups.get(w.account.id) ?? { account: w.account.name, workspaces: [] };
        group.workspaces.push({ id: w.id, name: w.name });
        groups.set(w.account.id, group);
      }
      return { accounts: [...groups.values()], selected: home.workspaceId };
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
