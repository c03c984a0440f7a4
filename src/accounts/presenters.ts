import type { AccountRow } from './tables.js';

/** The Account resource (docs/interface.md, Resources) (GET /accounts/me, PATCH /accounts/:id). */
export function presentAccount(row: AccountRow) {
  return {
    id: row.id,
    slug: row.slug,
    legalName: row.legal_name,
    displayName: row.display_name,
    status: row.status,
    website: row.website,
    industry: row.industry,
    billingEmail: row.billing_email,
    defaultTimezone: row.default_timezone,
    avatarUrl: row.avatar_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** GET /accounts/:id: the summary shape (docs/interface.md, Resources), with the caller's role. */
export function presentAccountSummary(row: AccountRow, role: string) {
  return {
    id: row.id,
    name: row.display_name ?? row.legal_name,
    slug: row.slug,
    role,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface MemberView {
  account_id: string;
  user_id: string;
  role: string;
  status: string;
  invited_by: string | null;
  joined_at: string | null;
  email: string;
  full_name: string | null;
  username: string | null;
  avatar_url: string | null;
}

/**
 * The Account member resource (docs/interface.md, Resources). A member attached by id (active, never joined by
 * their own act: `joined_at` null) shows no email: they did not give it to this account.
 */
export function presentMember(row: MemberView) {
  return {
    accountId: row.account_id,
    chainerId: row.user_id,
    role: row.role,
    status: row.status,
    email: row.status === 'active' && row.joined_at === null ? null : row.email,
    fullName: row.full_name,
    username: row.username,
    avatarUrl: row.avatar_url,
    invitedBy: row.invited_by,
    joinedAt: row.joined_at,
  };
}

export function presentWorkspace(row: {
  id: string;
  account_id: string;
  name: string;
  is_default: number;
  created_at: string;
  updated_at: string;
}) {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    isDefault: row.is_default === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function presentInvitation(
  row: {
    id: string;
    account_id: string;
    email: string;
    role: string;
    status: string;
    invited_by: string;
    created_at: string;
    expires_at: string;
    accepted_at: string | null;
    revoked_at: string | null;
    sent_count: number;
  },
  now: Date,
) {
  const expired = row.status === 'pending' && row.expires_at <= now.toISOString();
  return {
    id: row.id,
    accountId: row.account_id,
    email: row.email,
    role: row.role,
    status: expired ? 'expired' : row.status,
    invitedBy: row.invited_by,
    sentCount: row.sent_count,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    acceptedAt: row.accepted_at,
    revokedAt: row.revoked_at,
  };
}

export function presentApiKey(row: {
  id: string;
  account_id: string;
  user_id: string;
  name: string;
  key_prefix: string;
  last_four: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}) {
  return {
    id: row.id,
    accountId: row.account_id,
    ownerChainerId: row.user_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    lastFour: row.last_four,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export function presentTransfer(row: {
  id: string;
  account_id: string;
  from_user_id: string;
  to_user_id: string;
  status: string;
  created_at: string;
  decided_at: string | null;
}) {
  return {
    id: row.id,
    accountId: row.account_id,
    fromChainerId: row.from_user_id,
    toChainerId: row.to_user_id,
    status: row.status,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
  };
}
