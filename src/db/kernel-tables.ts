import type { Generated } from 'kysely';

interface SchemaMigrationsTable {
  id: string;
  applied_at: string;
}

/** Rows written by whichever process changed shared state; the others poll and react. */
interface ChangeFeedTable {
  id: Generated<number>;
  topic: string;
  key: string | null;
  origin: string;
  created_at: string;
}

export interface MailOutboxTable {
  id: string;
  to_address: string;
  subject: string;
  body_text: string;
  kind: string;
  created_at: string;
  sent_at: string | null;
  attempts: number;
  last_error: string | null;
  /** While one process sends it, no other claims it (docs/scaling.md, Mail). */
  claimed_until: string | null;
  /** Extra headers, a JSON object (List-Unsubscribe...); null for none. */
  headers: string | null;
}

/** The last tick of each cluster-scoped job that a node claimed (docs/scaling.md, Periodic jobs). */
interface JobTicksTable {
  name: string;
  tick: string;
  claimed_at: string;
}

/** A fixed-window counter of the rate limits exact across nodes (PostgreSQL only). */
interface RateLimitWindowsTable {
  bucket: string;
  count: number;
  reset_at_ms: number;
}

/** A credential key sealed under the key-encryption key (PostgreSQL only); one row is active. */
interface CredentialKeysTable {
  id: string;
  sealed_key: string;
  active: number;
  created_at: string;
}

export interface KernelTables {
  schema_migrations: SchemaMigrationsTable;
  change_feed: ChangeFeedTable;
  mail_outbox: MailOutboxTable;
  rate_limit_windows: RateLimitWindowsTable;
  credential_keys: CredentialKeysTable;
  job_ticks: JobTicksTable;
}
