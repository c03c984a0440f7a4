import { type Insertable, sql } from 'kysely';
import { countHitOnConflict } from '../../db/store/rate-limit-windows.js';
import { compileOnce } from '../../db/compiled.js';
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

/** The values `rotateRefreshTokenStatement` binds, by name. */
export type RotationParam =
  | 'tokenHash'
  | 'clientId'
  | 'requested'
  | 'resource'
  | 'at'
  | 'nowMs'
  | 'addressBucket'
  | 'addressLimit'
  | 'failuresBucket'
  | 'failuresLimit'
  | 'meterBucketPrefix'
  | 'meterLimit'
  | 'meterResetAtMs'
  | 'nextTokenHash'
  | 'nextExpiresAt';

/** What the statement answers: always one row; a column is null where its part found nothing. */
export interface RotationRow {
  address_count: number | null;
  address_reset_at_ms: number | null;
  failures_count: number | null;
  failures_reset_at_ms: number | null;
  id: string | null;
  grant_id: string | null;
  expires_at: string | null;
  client_id: string | null;
  user_id: string | null;
  scopes: string | null;
  resource: ResourceKind | null;
  workspace_id: string | null;
  meter_count: number | null;
  meter_reset_at_ms: number | null;
  rotated: boolean;
}

/**
 * PostgreSQL, the refresh grant's usual case in one statement (docs/postgres.md, Transactions):
 * 1. reads the endpoint's two failure budgets (`address`, `failures`, rate_limit_windows);
 * 2. finds the refresh token only if neither is spent and every rule lets this client rotate
 *    it now: its own, live grant, not consumed, not expired, the scope (`requested`, a text
 *    array or null for the whole grant) and resource (null for the grant's) within the grant;
 * 3. counts one hit on its user's meter, the bucket `meterBucketPrefix` and the user's id;
 * 4. within the meter's limit, consumes the token (`... where consumed_at is null`) and inserts
 *    its successor, made beforehand, in the same grant.
 * Of simultaneous uses exactly one consumes the token: the others find it consumed once they
 * hold its row (READ COMMITTED re-checks the condition) and insert nothing (`rotated` false).
 * Built and compiled once: the caller binds the values named by RotationParam.
 */
export const rotateRefreshTokenStatement = (db: Executor) =>
  compileOnce<RotationParam, RotationRow>((p) =>
    db
      .with('address', (qb) =>
        qb
          .selectFrom('rate_limit_windows')
          .select(['count', 'reset_at_ms'])
          .where('bucket', '=', p('addressBucket'))
          .where('reset_at_ms', '>', p('nowMs')),
      )
      .with('failures', (qb) =>
        qb
          .selectFrom('rate_limit_windows')
          .select(['count', 'reset_at_ms'])
          .where('bucket', '=', p('failuresBucket'))
          .where('reset_at_ms', '>', p('nowMs')),
      )
      .with('found', (qb) =>
        refreshTokenQuery(qb as unknown as Executor, p('tokenHash'))
          .where('g.client_id', '=', p('clientId'))
          .where('g.revoked_at', 'is', null)
          .where('r.consumed_at', 'is', null)
          .where('r.expires_at', '>', p('at'))
          .where(
            sql<boolean>`(${p('requested')}::text[] is null or string_to_array(g.scopes, ' ') @> ${p('requested')}::text[])`,
          )
          .where(sql<boolean>`(${p('resource')}::text is null or g.resource = ${p('resource')}::text)`)
          .where(sql<boolean>`not exists (select 1 from address where count >= ${p('addressLimit')})`)
          .where(sql<boolean>`not exists (select 1 from failures where count >= ${p('failuresLimit')})`),
      )
      .with('meter', (qb) =>
        qb
          .insertInto('rate_limit_windows')
          .columns(['bucket', 'count', 'reset_at_ms'])
          .expression((eb) =>
            eb
              .selectFrom('found')
              .select([
                sql<string>`${p('meterBucketPrefix')}::text || found.user_id`.as('bucket'),
                sql<number>`1`.as('count'),
                sql<number>`${p('meterResetAtMs')}::bigint`.as('reset_at_ms'),
              ]),
          )
          .onConflict(countHitOnConflict(p('nowMs')))
          .returning(['count', 'reset_at_ms']),
      )
      .with('consumed', (qb) =>
        qb
          .updateTable('oauth_refresh_tokens')
          .set({ consumed_at: p('at') })
          .where('token_hash', '=', p('tokenHash'))
          .where('consumed_at', 'is', null)
          .where(sql<boolean>`exists (select 1 from meter where count <= ${p('meterLimit')})`)
          .returning('grant_id'),
      )
      .with('successor', (qb) =>
        qb
          .insertInto('oauth_refresh_tokens')
          .columns(['token_hash', 'grant_id', 'created_at', 'expires_at'])
          .expression((eb) =>
            eb
              .selectFrom('consumed')
              .select([
                sql<string>`${p('nextTokenHash')}::text`.as('token_hash'),
                'grant_id',
                sql<string>`${p('at')}::text`.as('created_at'),
                sql<string>`${p('nextExpiresAt')}::text`.as('expires_at'),
              ]),
          )
          .returning('token_hash'),
      )
      .selectFrom(sql<{ one: number }>`(select 1)`.as('one'))
      .leftJoin('found', (join) => join.onTrue())
      .leftJoin('meter', (join) => join.onTrue())
      .select((eb) => [
        eb.selectFrom('address').select('count').as('address_count'),
        eb.selectFrom('address').select('reset_at_ms').as('address_reset_at_ms'),
        eb.selectFrom('failures').select('count').as('failures_count'),
        eb.selectFrom('failures').select('reset_at_ms').as('failures_reset_at_ms'),
        'found.id',
        'found.grant_id',
        'found.expires_at',
        'found.client_id',
        'found.user_id',
        'found.scopes',
        'found.resource',
        'found.workspace_id',
        'meter.count as meter_count',
        'meter.reset_at_ms as meter_reset_at_ms',
        eb.exists(eb.selectFrom('successor').select('token_hash')).as('rotated'),
      ]),
  );

export const deleteExpiredRefreshTokens = (db: Executor, before: string) =>
  db.deleteFrom('oauth_refresh_tokens').where('expires_at', '<', before).executeTakeFirst();
