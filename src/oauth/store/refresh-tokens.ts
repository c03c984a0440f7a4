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

/**
 * The values `rotateRefreshTokensStatement` binds, by name: an array with one element per
 * refresh of the batch, in order, or one value for the whole batch.
 */
export type RotationParam =
  | 'tokenHashes'
  | 'clientIds'
  | 'requested'
  | 'resources'
  | 'addressBuckets'
  | 'failuresBuckets'
  | 'meterBucketPrefixes'
  | 'nextTokenHashes'
  | 'at'
  | 'nextExpiresAt'
  | 'nowMs'
  | 'addressLimit'
  | 'failuresLimit'
  | 'meterLimit'
  | 'meterResetAtMs';

/** What the statement answers for one refresh (`ord`, from 1); a column is null where its part found nothing. */
export interface RotationRow {
  ord: number;
  address_count: number | null;
  address_reset_at_ms: number | null;
  failures_count: number | null;
  failures_reset_at_ms: number | null;
  id: string | null;
  grant_id: string | null;
  client_id: string | null;
  user_id: string | null;
  scopes: string | null;
  resource: ResourceKind | null;
  workspace_id: string | null;
  meter_count: number | null;
  meter_reset_at_ms: number | null;
  rotated: boolean;
}

/** One refresh of the batch, as `input` holds it. */
interface RotationInput {
  ord: number;
  token_hash: string;
  client_id: string;
  requested: string | null;
  resource: string | null;
  address_bucket: string;
  failures_bucket: string;
  meter_bucket_prefix: string;
  next_token_hash: string;
}

/**
 * PostgreSQL, the refresh grant's usual case for a batch of refreshes in one statement
 * (docs/postgres.md, Transactions). For each refresh of the batch (`input`), it
 * 1. reads the endpoint's two failure budgets for it (`windows`, rate_limit_windows);
 * 2. finds its refresh token only if neither is spent and every rule lets its client rotate
 *    it now: the client's own, live grant, not consumed, not expired, the scopes asked for
 *    (space-separated, null for the whole grant) and resource (null for the grant's) within
 *    the grant (`found`);
 * 3. counts one hit on the token's user's meter, the bucket `meter_bucket_prefix` and the
 *    user's id: the batch's hits on one bucket are counted together, in bucket order (so two
 *    statements lock the meters in the same order), and each refresh gets the count it would
 *    have got alone, in the batch's order (`meter`, `charged`);
 * 4. within the meter's limit, consumes the token (`... where consumed_at is null`) and
 *    inserts its successor, made beforehand, in the same grant (`consumed`, `successor`).
 * Of simultaneous uses of one token, in one batch or in several, exactly one consumes it: in
 * a batch the first, across statements the one that holds its row first (READ COMMITTED
 * re-checks the condition); the others are not `rotated`, a reuse.
 * Built and compiled once: the caller binds the values named by RotationParam.
 */
export const rotateRefreshTokensStatement = (db: Executor) =>
  compileOnce<RotationParam, RotationRow>((p) =>
    db
      .with(
        'input',
        () => sql<RotationInput>`(select * from unnest(
          ${p('tokenHashes')}::text[], ${p('clientIds')}::text[], ${p('requested')}::text[],
          ${p('resources')}::text[], ${p('addressBuckets')}::text[], ${p('failuresBuckets')}::text[],
          ${p('meterBucketPrefixes')}::text[], ${p('nextTokenHashes')}::text[]
        ) with ordinality as i(token_hash, client_id, requested, resource, address_bucket,
          failures_bucket, meter_bucket_prefix, next_token_hash, ord))`,
      )
      .with('windows', (qb) =>
        qb
          .selectFrom('input as i')
          .leftJoin('rate_limit_windows as a', (join) =>
            join.onRef('a.bucket', '=', 'i.address_bucket').on('a.reset_at_ms', '>', p('nowMs')),
          )
          .leftJoin('rate_limit_windows as f', (join) =>
            join.onRef('f.bucket', '=', 'i.failures_bucket').on('f.reset_at_ms', '>', p('nowMs')),
          )
          .select([
            'i.ord',
            'a.count as address_count',
            'a.reset_at_ms as address_reset_at_ms',
            'f.count as failures_count',
            'f.reset_at_ms as failures_reset_at_ms',
          ]),
      )
      .with('found', (qb) =>
        qb
          .selectFrom('input as i')
          .innerJoin('windows as w', 'w.ord', 'i.ord')
          .innerJoin('oauth_refresh_tokens as r', 'r.token_hash', 'i.token_hash')
          .innerJoin('oauth_grants as g', 'g.id', 'r.grant_id')
          .select([
            'i.ord',
            'r.token_hash as id',
            'r.grant_id',
            'g.client_id',
            'g.user_id',
            'g.scopes',
            'g.resource',
            'g.workspace_id',
            sql<string>`i.meter_bucket_prefix || g.user_id`.as('bucket'),
            sql<number>`row_number() over (partition by i.meter_bucket_prefix || g.user_id order by i.ord)`.as('rank'),
          ])
          .whereRef('g.client_id', '=', 'i.client_id')
          .where('g.revoked_at', 'is', null)
          .where('r.consumed_at', 'is', null)
          .where('r.expires_at', '>', p('at'))
          .where(
            sql<boolean>`(i.requested is null or string_to_array(g.scopes, ' ') @> string_to_array(i.requested, ' '))`,
          )
          .where(sql<boolean>`(i.resource is null or g.resource = i.resource)`)
          .where(sql<boolean>`coalesce(w.address_count, 0) < ${p('addressLimit')}`)
          .where(sql<boolean>`coalesce(w.failures_count, 0) < ${p('failuresLimit')}`),
      )
      .with('hits', (qb) =>
        qb
          .selectFrom('found')
          .select(['bucket', sql<number>`count(*)`.as('n')])
          .groupBy('bucket'),
      )
      .with('meter', (qb) =>
        qb
          .insertInto('rate_limit_windows')
          .columns(['bucket', 'count', 'reset_at_ms'])
          .expression((eb) =>
            eb
              .selectFrom('hits')
              .select(['bucket', 'n as count', sql<number>`${p('meterResetAtMs')}::bigint`.as('reset_at_ms')])
              .orderBy('bucket'),
          )
          .onConflict(countHitOnConflict(p('nowMs')))
          .returning(['bucket', 'count', 'reset_at_ms']),
      )
      .with('charged', (qb) =>
        qb
          .selectFrom('found as f')
          .innerJoin('meter as m', 'm.bucket', 'f.bucket')
          .innerJoin('hits as h', 'h.bucket', 'f.bucket')
          .select([
            'f.ord',
            'f.id',
            sql<number>`m.count - h.n + f.rank`.as('meter_count'),
            'm.reset_at_ms as meter_reset_at_ms',
          ]),
      )
      .with('consumed', (qb) =>
        qb
          .updateTable('oauth_refresh_tokens as r')
          .from(
            sql<{ id: string; ord: number }>`(select distinct on (id) id, ord from charged
              where meter_count <= ${p('meterLimit')} order by id, ord)`.as('c'),
          )
          .set({ consumed_at: p('at') })
          .whereRef('r.token_hash', '=', 'c.id')
          .where('r.consumed_at', 'is', null)
          .returning(['r.grant_id', 'c.ord']),
      )
      .with('successor', (qb) =>
        qb
          .insertInto('oauth_refresh_tokens')
          .columns(['token_hash', 'grant_id', 'created_at', 'expires_at'])
          .expression((eb) =>
            eb
              .selectFrom('consumed as c')
              .innerJoin('input as i', 'i.ord', 'c.ord')
              .select([
                'i.next_token_hash as token_hash',
                'c.grant_id',
                sql<string>`${p('at')}::text`.as('created_at'),
                sql<string>`${p('nextExpiresAt')}::text`.as('expires_at'),
              ]),
          )
          .returning('grant_id'),
      )
      .selectFrom('windows as w')
      .leftJoin('found as f', 'f.ord', 'w.ord')
      .leftJoin('charged as ch', 'ch.ord', 'w.ord')
      .select((eb) => [
        'w.ord',
        'w.address_count',
        'w.address_reset_at_ms',
        'w.failures_count',
        'w.failures_reset_at_ms',
        'f.id',
        'f.grant_id',
        'f.client_id',
        'f.user_id',
        'f.scopes',
        'f.resource',
        'f.workspace_id',
        'ch.meter_count',
        'ch.meter_reset_at_ms',
        eb.exists(eb.selectFrom('consumed as c').whereRef('c.ord', '=', 'w.ord').select('c.ord')).as('rotated'),
      ])
      .orderBy('w.ord'),
  );

export const deleteExpiredRefreshTokens = (db: Executor, before: string) =>
  db.deleteFrom('oauth_refresh_tokens').where('expires_at', '<', before).executeTakeFirst();
