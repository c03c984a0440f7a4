import { type Insertable, sql } from 'kysely';
import { countHitOnConflict } from '../../db/store/rate-limit-windows.js';
import type { Executor } from '../../db/tx.js';
import type { ResourceKind } from '../resources.js';
import type { OAuthRefreshTokensTable } from '../tables.js';

/** Every SQL statement of the refresh tokens (oauth_refresh_tokens, with their grants). */
export const insertRefreshToken = (db: Executor, row: Insertable<OAuthRefreshTokensTable>) =>
  db.insertInto('oauth_refresh_tokens').values(row).execute();

/** A refresh token with its grant, as a query: the hot path prepares it once (hot-store.ts). */
export const refreshTokenQuery = (db: Executor, tokenHash: string) =>
  db
    .selectFrom('oauth_refresh_tokens as r')
    .innerJoin('oauth_grants as g', 'g.id', 'r.grant_id')
    .select([
      'r.token_hash as id',
      'r.grant_id',
      'r.expires_at',
      'r.consumed_at',
      'g.client_id',
      'g.user_id',
      'g.scopes',
      'g.resource',
      'g.workspace_id',
      'g.revoked_at',
    ])
    .where('r.token_hash', '=', tokenHash);

export const findRefreshToken = (db: Executor, tokenHash: string) =>
  refreshTokenQuery(db, tokenHash).executeTakeFirst();

/** Marks a refresh token used; false when it already was (reuse). */
export async function consumeRefreshToken(db: Executor, tokenHash: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_refresh_tokens')
    .set({ consumed_at: at })
    .where('token_hash', '=', tokenHash)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** What a refresh that may rotate the token is for: its client, scope and resource, and when. */
export interface RefreshClaim {
  tokenHash: string;
  clientId: string;
  /** The scopes asked for, all of which the grant must hold; null for the whole grant. */
  requested: string[] | null;
  resource: ResourceKind | null;
  at: string;
}

/** The meter's window and the bucket of the user a refresh token names, the user's id last. */
export interface MeterCharge {
  bucketPrefix: string;
  nowMs: number;
  windowMs: number;
}

/**
 * PostgreSQL, one statement: finds a refresh token that every rule lets this client rotate now
 * (its own, live grant, not consumed, not expired, the scope and resource asked for within the
 * grant) and counts one hit on its user's meter (rate_limit_windows). Nothing when any rule
 * fails: the caller classifies on the ordinary path. The counter is unlogged, so the statement
 * commits without waiting for the WAL and holds the counter's row only that long
 * (docs/postgres.md, Transactions).
 */
export const meterRefreshToken = (db: Executor, claim: RefreshClaim, charge: MeterCharge) =>
  db
    .with('found', (qb) => {
      let query = refreshTokenQuery(qb as unknown as Executor, claim.tokenHash)
        .where('g.client_id', '=', claim.clientId)
        .where('g.revoked_at', 'is', null)
        .where('r.consumed_at', 'is', null)
        .where('r.expires_at', '>', claim.at);
      if (claim.requested)
        query = query.where(sql<boolean>`string_to_array(g.scopes, ' ') @> ${claim.requested}::text[]`);
      if (claim.resource) query = query.where('g.resource', '=', claim.resource);
      return query;
    })
    .with('meter', (qb) =>
      qb
        .insertInto('rate_limit_windows')
        .columns(['bucket', 'count', 'reset_at_ms'])
        .expression((eb) =>
          eb
            .selectFrom('found')
            .select([
              sql<string>`${charge.bucketPrefix}::text || found.user_id`.as('bucket'),
              sql<number>`1`.as('count'),
              sql<number>`${charge.nowMs + charge.windowMs}::bigint`.as('reset_at_ms'),
            ]),
        )
        .onConflict(countHitOnConflict(charge.nowMs))
        .returning(['count', 'reset_at_ms']),
    )
    .selectFrom(['found', 'meter'])
    .selectAll()
    .executeTakeFirst();

/**
 * PostgreSQL, one statement: consumes a refresh token still unconsumed and inserts its
 * successor in the same grant. False when it was consumed meanwhile (a reuse): then nothing
 * is inserted. A single statement is atomic; of simultaneous ones exactly one finds the token
 * unconsumed once it holds the row.
 */
export async function rotateRefreshToken(
  db: Executor,
  tokenHash: string,
  at: string,
  next: { token_hash: string; created_at: string; expires_at: string },
): Promise<boolean> {
  const result = await db
    .with('consumed', (qb) =>
      qb
        .updateTable('oauth_refresh_tokens')
        .set({ consumed_at: at })
        .where('token_hash', '=', tokenHash)
        .where('consumed_at', 'is', null)
        .returning('grant_id'),
    )
    .insertInto('oauth_refresh_tokens')
    .columns(['token_hash', 'grant_id', 'created_at', 'expires_at'])
    .expression((eb) =>
      eb
        .selectFrom('consumed')
        .select([
          sql<string>`${next.token_hash}::text`.as('token_hash'),
          'grant_id',
          sql<string>`${next.created_at}::text`.as('created_at'),
          sql<string>`${next.expires_at}::text`.as('expires_at'),
        ]),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export const deleteExpiredRefreshTokens = (db: Executor, before: string) =>
  db.deleteFrom('oauth_refresh_tokens').where('expires_at', '<', before).executeTakeFirst();
