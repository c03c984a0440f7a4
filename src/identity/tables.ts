export interface UsersTable {
  id: string;
  email: string; // stored lower-cased; unique
  email_verified_at: string | null;
  password_hash: string | null;
  full_name: string | null;
  username: string | null; // unique when set
  avatar_url: string | null;
  created_at: string;
  updated_at: string;
}

/** A sign-in session: one refresh-token family. Revoking it ends every token of the family. */
interface AuthSessionsTable {
  id: string;
  user_id: string;
  created_at: string;
  last_used_at: string;
  revoked_at: string | null;
  revoke_reason: string | null;
  /** 0025: the device that opened it (User-Agent, client address), as the account center shows it. */
  user_agent: string | null;
  ip: string | null;
  /** 0025: when this session last proved a second factor (docs/identity.md, Step-up). */
  factor_verified_at: string | null;
}

interface AuthRefreshTokensTable {
  id: string;
  session_id: string;
  token_hash: string; // SHA-256 hex of the opaque token
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
}

/** Emailed single-use secrets (magic links, confirmations, recovery codes, reset tokens). */
export interface OneTimeTokensTable {
  id: string;
  user_id: string | null;
  purpose: string;
  token_hash: string;
  payload: string | null; // JSON, never a secret
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
  attempts: number;
}

/**
 * The browser session of the pages (browser-sessions.ts); the cookie holds the id, we keep its
 * hash. Named for the OAuth pages it began with: renaming it would stop the pages of a node
 * not yet upgraded (docs/scaling.md, rolling upgrades).
 */
interface BrowserSessionsTable {
  id_hash: string;
  user_id: string;
  session_id: string;
  created_at: string;
  expires_at: string;
}

/** Two-step sign-in (docs/identity.md): the sealed RFC 6238 secret; no enabled_at while being set up. */
interface UserTotpTable {
  user_id: string;
  secret_sealed: string;
  enabled_at: string | null;
  /** The time step of the last accepted code: a code of that step or an earlier one is a replay. */
  last_used_step: number | null;
  created_at: string;
}

/** Single-use recovery codes: SHA-256 of the user id and the code. */
export interface UserRecoveryCodesTable {
  id: string;
  user_id: string;
  code_hash: string;
  created_at: string;
  used_at: string | null;
}

/** A WebAuthn credential (docs/identity.md, Passkeys); ids and keys base64url. */
export interface UserPasskeysTable {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: number;
  /** JSON array of the transports the authenticator named. */
  transports: string;
  name: string;
  device_type: string;
  backed_up: number;
  created_at: string;
  last_used_at: string | null;
}

export interface IdentityTables {
  users: UsersTable;
  auth_sessions: AuthSessionsTable;
  auth_refresh_tokens: AuthRefreshTokensTable;
  one_time_tokens: OneTimeTokensTable;
  oauth_browser_sessions: BrowserSessionsTable;
  user_totp: UserTotpTable;
  user_recovery_codes: UserRecoveryCodesTable;
  user_passkeys: UserPasskeysTable;
}
