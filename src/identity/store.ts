import type { Insertable, Selectable } from 'kysely';
import { compiledStatement } from '../db/compiled.js';
import type { Executor } from '../db/tx.js';
import type { OneTimeTokensTable, UsersTable } from './tables.js';
import { legacyEmail, normalizeEmail } from './email.js';

export type UserRow = Selectable<UsersTable>;

/** On every audited change and every signed-in request: compiled once. */
const userById = compiledStatement<'id', UserRow>((db, p) =>
  db.selectFrom('users').selectAll().where('id', '=', p('id')),
);
export const findUserById = (db: Executor, id: string) => userById.first(db, { id });

/** Whether a user with this id exists (no columns read: other domains only check the reference). */
/** What another domain may show of a user (the AI prompt context): names, with updated_at. */
export const findUserProfile = (db: Executor, userId: string) =>
  db.selectFrom('users').select(['updated_at', 'full_name', 'username']).where('id', '=', userId).executeTakeFirst();

export const userExists = async (db: Executor, id: string): Promise<boolean> =>
  (await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

/** By the canonical form first; then by the legacy form, for rows the migration to it left (migrations/0013). */
export async function findUserByEmail(db: Executor, email: string) {
  const canonical = normalizeEmail(email);
  const legacy = legacyEmail(email);
  const rows = await db.selectFrom('users').selectAll().where('email', 'in', [canonical, legacy]).execute();
  return rows.find((r) => r.email === canonical) ?? rows[0];
}

export const findUserByUsername = (db: Executor, username: string) =>
  db.selectFrom('users').selectAll().where('username', '=', username.trim().toLowerCase()).executeTakeFirst();

export const insertUser = (db: Executor, row: Insertable<UsersTable>) => db.insertInto('users').values(row).execute();

export const updateUser = (db: Executor, id: string, patch: Partial<Insertable<UsersTable>>) =>
  db.updateTable('users').set(patch).where('id', '=', id).execute();

export interface NewSession {
  id: string;
  user_id: string;
  created_at: string;
  user_agent: string | null;
  ip: string | null;
  factor_verified_at: string | null;
}

export const insertSession = (db: Executor, row: NewSession) =>
  db
    .insertInto('auth_sessions')
    .values({ ...row, last_used_at: row.created_at, revoked_at: null, revoke_reason: null })
    .execute();

/**
 * A user's sessions that can still be used: not revoked, and standing on a refresh token or a
 * browser session that has not expired (a session whose tokens all ran out is over).
 */
export const listLiveSessions = (db: Executor, userId: string, nowIso: string) =>
  db
    .selectFrom('auth_sessions as s')
    .select(['s.id', 's.created_at', 's.last_used_at', 's.user_agent', 's.ip', 's.factor_verified_at'])
    .where('s.user_id', '=', userId)
    .where('s.revoked_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom('auth_refresh_tokens as r')
            .select('r.id')
            .whereRef('r.session_id', '=', 's.id')
            .where('r.consumed_at', 'is', null)
            .where('r.expires_at', '>', nowIso),
        ),
        eb.exists(
          eb
            .selectFrom('oauth_browser_sessions as b')
            .select('b.id_hash')
            .whereRef('b.session_id', '=', 's.id')
            .where('b.expires_at', '>', nowIso),
        ),
      ]),
    )
    .orderBy('s.last_used_at', 'desc')
    .orderBy('s.id')
    .execute();

/** Records that a session proved a second factor now (docs/identity.md, Step-up). */
export const markSessionFactorVerified = (db: Executor, id: string, at: string) =>
  db.updateTable('auth_sessions').set({ factor_verified_at: at }).where('id', '=', id).execute();

export const findSession = (db: Executor, id: string) =>
  db.selectFrom('auth_sessions').selectAll().where('id', '=', id).executeTakeFirst();

export const revokeSession = (db: Executor, id: string, reason: string, at: string) =>
  db
    .updateTable('auth_sessions')
    .set({ revoked_at: at, revoke_reason: reason })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();

/** Revokes every live session of a user; returns their ids. */
export async function revokeUserSessions(
  db: Executor,
  userId: string,
  reason: string,
  at: string,
  exceptSessionId: string | null = null,
): Promise<string[]> {
  let query = db.selectFrom('auth_sessions').select('id').where('user_id', '=', userId).where('revoked_at', 'is', null);
  if (exceptSessionId) query = query.where('id', '!=', exceptSessionId);
  const live = await query.execute();
  if (live.length > 0) {
    await db
      .updateTable('auth_sessions')
      .set({ revoked_at: at, revoke_reason: reason })
      .where(
        'id',
        'in',
        live.map((s) => s.id),
      )
      .where('revoked_at', 'is', null)
      .execute();
  }
  return live.map((s) => s.id);
}

export const insertRefreshToken = (
  db: Executor,
  row: { id: string; session_id: string; token_hash: string; created_at: string; expires_at: string },
) =>
  db
    .insertInto('auth_refresh_tokens')
    .values({ ...row, consumed_at: null })
    .execute();

export const findRefreshToken = (db: Executor, tokenHash: string) =>
  db
    .selectFrom('auth_refresh_tokens')
    .innerJoin('auth_sessions', 'auth_sessions.id', 'auth_refresh_tokens.session_id')
    .select([
      'auth_refresh_tokens.id',
      'auth_refresh_tokens.session_id',
      'auth_refresh_tokens.expires_at',
      'auth_refresh_tokens.consumed_at',
      'auth_sessions.user_id',
      'auth_sessions.revoked_at',
    ])
    .where('auth_refresh_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();

/** Marks a refresh token consumed only if it still is not: the one winner of a race gets 1. */
export const consumeRefreshToken = async (db: Executor, id: string, at: string): Promise<boolean> => {
  const result = await db
    .updateTable('auth_refresh_tokens')
    .set({ consumed_at: at })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
};

export const touchSession = (db: Executor, id: string, at: string) =>
  db.updateTable('auth_sessions').set({ last_used_at: at }).where('id', '=', id).execute();

/** A one-time secret by purpose and hash, used or not: the caller decides whether it is live. */
export const findOneTimeToken = (db: Executor, purpose: string, tokenHash: string) =>
  db
    .selectFrom('one_time_tokens')
    .select(['id', 'user_id', 'payload', 'expires_at', 'consumed_at'])
    .where('purpose', '=', purpose)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();

/** The newest unused, unexpired secret of a purpose for a user (a typed short code). */
export const findLatestLiveOneTimeToken = (db: Executor, userId: string, purpose: string, nowIso: string) =>
  db
    .selectFrom('one_time_tokens')
    .select(['id', 'user_id', 'payload', 'token_hash', 'attempts'])
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();

export const insertOneTimeToken = (db: Executor, row: Insertable<OneTimeTokensTable>) =>
  db.insertInto('one_time_tokens').values(row).execute();

/** Marks every unused secret of a purpose for a user used. */
export const retireOneTimeTokens = (db: Executor, userId: string, purpose: string, at: string) =>
  db
    .updateTable('one_time_tokens')
    .set({ consumed_at: at })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('consumed_at', 'is', null)
    .execute();

/** Marks a secret used only if it still is not: the one winner of a race gets true. */
export const consumeOneTimeToken = async (db: Executor, id: string, at: string): Promise<boolean> => {
  const result = await db
    .updateTable('one_time_tokens')
    .set({ consumed_at: at })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
};

/** Records a wrong guess; `consumedAt` burns the secret when the guesses ran out. */
/**
 * Counts a wrong guess in one statement, so guesses on other connections cannot overwrite each
 * other's count: only a live secret under the cap counts, the one reaching the cap burns it.
 */
export const recordOneTimeTokenAttempt = (db: Executor, id: string, maxAttempts: number, at: string) =>
  db
    .updateTable('one_time_tokens')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      consumed_at: eb
        .case()
        .when('attempts', '>=', maxAttempts - 1)
        .then(at)
        .else(eb.ref('consumed_at'))
        .end(),
    }))
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .where('attempts', '<', maxAttempts)
    .execute();

/** Housekeeping: drops refresh tokens and one-time secrets that expired before the cutoff. */
export async function purgeExpiredSecrets(db: Executor, cutoff: string): Promise<void> {
  await db.deleteFrom('auth_refresh_tokens').where('expires_at', '<', cutoff).execute();
  await db.deleteFrom('one_time_tokens').where('expires_at', '<', cutoff).execute();
  await db.deleteFrom('oauth_browser_sessions').where('expires_at', '<', cutoff).execute();
}

// Browser sessions of the pages (browser-sessions.ts)
export const insertBrowserSession = (
  db: Executor,
  row: { id_hash: string; user_id: string; session_id: string; created_at: string; expires_at: string },
) => db.insertInto('oauth_browser_sessions').values(row).execute();
export const findBrowserSession = (db: Executor, idHash: string) =>
  db.selectFrom('oauth_browser_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
export const deleteBrowserSession = (db: Executor, idHash: string) =>
  db.deleteFrom('oauth_browser_sessions').where('id_hash', '=', idHash).returning('session_id').executeTakeFirst();
