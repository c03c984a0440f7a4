import type { Generated, Selectable } from 'kysely';

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
  /** 0005: the status before a soft delete (restore returns to it), who closed it, when purged. */
  status_before_close: string | null;
  deleted_by: string | null;
  hard_deleted_at: string | null;
  /** 0025: 1 when approvers must have a second factor (docs/accounts.md, Approvers' second factor). */
  approvers_need_second_factor: Generated<number>;
}

export interface AccountMembersTable {
  account_id: string;
  user_id: string;
  role: string; // owner, admin, analyst, billing, viewer, member
  status: string; // invited, active
  invited_by: string | null;
  joined_at: string | null;
  created_at: string;
  /** Insertion order, for ties of created_at (set by the database; migration 0020). */
  seq: Generated<number>;
}

export interface WorkspacesTable {
  id: string;
  account_id: string;
  name: string;
  is_default: number;
  created_at: string;
  updated_at: string;
}

interface WorkspaceMembersTable {
  workspace_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

interface AccountEntitlementsTable {
  account_id: string;
  feature: string; // e.g. ai
  granted_at: string;
  granted_by: string | null;
}

export interface AccountInvitationsTable {
  id: string;
  account_id: string;
  email: string; // lower-cased
  role: string;
  status: string; // pending, accepted, revoked (expired is derived from expires_at)
  invited_by: string;
  token_id: string; // the one-time token currently valid for it; a resend replaces it
  sent_count: Generated<number>;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
  revoked_at: string | null;
}

export interface AccountOwnershipTransfersTable {
  id: string;
  account_id: string;
  from_user_id: string;
  to_user_id: string;
  status: string; // pending, accepted, cancelled
  created_at: string;
  decided_at: string | null;
}

export interface AccountApiKeysTable {
  id: string;
  account_id: string;
  user_id: string; // the member who owns it; it acts with that member's role
  name: string;
  key_prefix: string;
  last_four: string;
  key_hash: string; // SHA-256 hex of the whole key
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  revoke_reason: string | null;
}

export interface AccountSeatReleasesTable {
  id: string;
  account_id: string;
  user_id: string;
  status: string; // requested, confirmed, or why it did not happen (billing_not_configured...)
  requested_by: string | null;
  created_at: string;
  confirmed_at: string | null;
}

export interface AccountsTables {
  account_invitations: AccountInvitationsTable;
  account_ownership_transfers: AccountOwnershipTransfersTable;
  account_api_keys: AccountApiKeysTable;
  account_seat_releases: AccountSeatReleasesTable;
  accounts: AccountsTable;
  account_members: AccountMembersTable;
  workspaces: WorkspacesTable;
  workspace_members: WorkspaceMembersTable;
  account_entitlements: AccountEntitlementsTable;
}

export type AccountRow = Selectable<AccountsTable>;
