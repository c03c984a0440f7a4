import type { Generated } from 'kysely';

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

interface AccountAuditCountsTable {
  account_id: string;
  total: number;
}

export interface AuditTables {
  account_audit_log: AccountAuditLogTable;
  account_audit_counts: AccountAuditCountsTable;
}
