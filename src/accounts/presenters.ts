import type { Selectable } from 'kysely';
import type { AccountsTable } from './tables.js';

export type AccountRow = Selectable<AccountsTable>;

/** The Account resource of the spec (GET /accounts/me, PATCH /accounts/:id). */
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
