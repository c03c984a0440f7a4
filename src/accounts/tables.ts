import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  slug: string;
  legal_name: string;
  display_name: string | null;
  status: string; // active, suspended, closed, deletion_approved, hard_deleted
  website: string | null;
  industry: string | null;
  billing_email: string | null;
  default_timezone: string | null;
  avatar_url: string | null;
  account_type: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  purge_after: string | null;
}

export interface AccountMembersTable {
  account_id: string;
  user_id: string;
  role: string; // owner, admin, analyst, billing, viewer, member
  status: string; // invited, active
  invited_by: string | null;
  joined_at: string | null;
  created_at: string;
}

export interface WorkspacesTable {
  id: string;
  account_id: string;
  name: string;
  is_default: number;
  created_at: string;
  updated_at: string;
}

export interface WorkspaceMembersTable {
  workspace_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

export interface AccountEntitlementsTable {
  account_id: string;
  feature: string; // e.g. ai
  granted_at: string;
  granted_by: string | null;
}

export interface AccountAuditLogTable {
  seq: Generated<number>; // keyset order: newest first by seq
  id: string;
  account_id: string;
  action: string;
  actor_id: string;
  actor_username: string;
  target_id: string;
  metadata: string; // JSON object
  created_at: string;
}

export interface AccountsTables {
  accounts: AccountsTable;
  account_members: AccountMembersTable;
  workspaces: WorkspacesTable;
  workspace_members: WorkspaceMembersTable;
  account_entitlements: AccountEntitlementsTable;
  account_audit_log: AccountAuditLogTable;
}
