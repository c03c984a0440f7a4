const ROLES = ['owner', 'admin', 'analyst', 'billing', 'viewer', 'member'] as const;
export type Role = (typeof ROLES)[number];

/** Roles the member endpoints may assign; owner moves only through ownership transfer. */
export const ASSIGNABLE_ROLES = ['admin', 'analyst', 'billing', 'viewer', 'member'] as const;
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

/** Roles inside a workspace (docs/accounts.md, Workspaces); account owners and admins are admins of every one. */
export const WORKSPACE_ROLES = ['admin', 'member', 'viewer'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

/** Who may do what in an account (docs/accounts.md, Roles); every use case names one of these. */
export const OWNER: readonly Role[] = ['owner'];
export const OWNER_OR_ADMIN: readonly Role[] = ['owner', 'admin'];
export const ANY_MEMBER: readonly Role[] = ROLES;

export const ACCOUNT_STATUSES = ['active', 'suspended', 'closed', 'deletion_approved', 'hard_deleted'] as const;
