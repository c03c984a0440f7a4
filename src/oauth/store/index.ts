import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { OAuthClientsTable, OAuthCodesTable, OAuthGrantsTable } from '../tables.js';

export type ClientRow = Selectable<OAuthClientsTable>;

// Clients
export const insertClient = (db: Executor, row: Insertable<OAuthClientsTable>) =>
  db.insertInto('oauth_clients').values(row).execute();
export const findClient = (db: Executor, id: string) =>
  db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
/** Clients an operator's word names: by id (when it can be one), or by exact name (names need not be unique). */
export const findClientsByIdOrName = (db: Executor, ref: string, idShaped: boolean) =>
  db
    .selectFrom('oauth_clients')
    .selectAll()
    .where((eb) => (idShaped ? eb.or([eb('id', '=', ref), eb('name', '=', ref)]) : eb('name', '=', ref)))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
export const listClients = (db: Executor) =>
  db.selectFrom('oauth_clients').selectAll().orderBy('created_at').orderBy('id').execute();
export const setClientSecret = (db: Executor, id: string, secretHash: string, at: string) =>
  db
    .updateTable('oauth_clients')
    .set({ secret_hash: secretHash, updated_at: at })
    .where('id', '=', id)
    .executeTakeFirst();
export const deleteClient = (db: Executor, id: string) =>
  db.deleteFrom('oauth_clients').where('id', '=', id).executeTakeFirst();

/** A metadata document's client, inserted or refreshed from a new copy of the document. */
export const upsertMetadataClient = (db: Executor, row: Insertable<OAuthClientsTable>) =>
  db
    .insertInto('oauth_clients')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet({
          name: row.name,
          redirect_uris: row.redirect_uris,
          scopes: row.scopes,
          metadata_expires_at: row.metadata_expires_at,
          updated_at: row.updated_at,
        })
        .where('oauth_clients.registration', '=', 'metadata_document'),
    )
    .execute();

/** Self-registered clients not refreshed since `before` that never reached a grant; returns how many went. */
export async function deleteUnusedSelfRegisteredClients(db: Executor, before: string): Promise<number> {
  const result = await db
    .deleteFrom('oauth_clients')
    .where('registration', 'in', ['dynamic', 'metadata_document'])
    .where('updated_at', '<', before)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('oauth_grants')
            .select('oauth_grants.id')
            .whereRef('oauth_grants.client_id', '=', 'oauth_clients.id'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

// Grants (refresh token families)
export const insertGrant = (db: Executor, row: Insertable<OAuthGrantsTable>) =>
  db.insertInto('oauth_grants').values(row).execute();
export const findGrant = (db: Executor, id: string) =>
  db.selectFrom('oauth_grants').selectAll().where('id', '=', id).executeTakeFirst();

export async function revokeGrant(db: Executor, id: string, reason: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_grants')
    .set({ revoked_at: at, revoke_reason: reason })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** How many grants of a client are live (what deleting it revokes). */
export async function countLiveGrantsOf(db: Executor, clientId: string): Promise<number> {
  const row = await db
    .selectFrom('oauth_grants')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Revokes the live grants of a client (optionally only one user's); returns their ids. */
export async function revokeGrantsOf(
  db: Executor,
  filter: { clientId: string; userId?: string },
  reason: string,
  at: string,
): Promise<string[]> {
  let query = db
    .selectFrom('oauth_grants')
    .select('id')
    .where('client_id', '=', filter.clientId)
    .where('revoked_at', 'is', null);
  if (filter.userId) query = query.where('user_id', '=', filter.userId);
  const ids = (await query.execute()).map((r) => r.id);
  if (ids.length > 0)
    await db
      .updateTable('oauth_grants')
      .set({ revoked_at: at, revoke_reason: reason })
      .where('id', 'in', ids)
      .execute();
  return ids;
}

/** Revokes every live grant of a user, whatever the client (password reset, say); returns their ids. */
export async function revokeAllGrantsOfUser(
  db: Executor,
  userId: string,
  reason: string,
  at: string,
): Promise<string[]> {
  const ids = (
    await db
      .selectFrom('oauth_grants')
      .select('id')
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .execute()
  ).map((r) => r.id);
  if (ids.length > 0)
    await db
      .updateTable('oauth_grants')
      .set({ revoked_at: at, revoke_reason: reason })
      .where('id', 'in', ids)
      .where('revoked_at', 'is', null)
      .execute();
  return ids;
}

// Authorization codes
export const insertCode = (db: Executor, row: Insertable<OAuthCodesTable>) =>
  db.insertInto('oauth_codes').values(row).execute();
export const findCode = (db: Executor, codeHash: string) =>
  db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();

/** Marks a code used; false when it already was (a replay). */
export async function consumeCode(db: Executor, codeHash: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_codes')
    .set({ consumed_at: at })
    .where('code_hash', '=', codeHash)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export const deleteExpiredCodes = (db: Executor, before: string) =>
  db.deleteFrom('oauth_codes').where('expires_at', '<', before).executeTakeFirst();

export * from './refresh-tokens.js';

// Access tokens revoked one by one
export const insertRevokedJti = (
  db: Executor,
  row: { jti: string; grant_id: string; expires_at: string; created_at: string },
) =>
  db
    .insertInto('oauth_revoked_access_tokens')
    .values(row)
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
export const findRevokedJti = (db: Executor, jti: string) =>
  db.selectFrom('oauth_revoked_access_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
export const deleteExpiredRevokedJtis = (db: Executor, before: string) =>
  db.deleteFrom('oauth_revoked_access_tokens').where('expires_at', '<', before).executeTakeFirst();

// Consents
export const findConsent = (db: Executor, userId: string, clientId: string) =>
  db
    .selectFrom('oauth_consents')
    .selectAll()
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();

export const upsertConsent = (db: Executor, row: { user_id: string; client_id: string; scopes: string; at: string }) =>
  db
    .insertInto('oauth_consents')
    .values({
      user_id: row.user_id,
      client_id: row.client_id,
      scopes: row.scopes,
      created_at: row.at,
      updated_at: row.at,
    })
    .onConflict((oc) => oc.columns(['user_id', 'client_id']).doUpdateSet({ scopes: row.scopes, updated_at: row.at }))
    .execute();

export async function deleteConsent(db: Executor, userId: string, clientId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('oauth_consents')
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteConsentsOfUser(db: Executor, userId: string): Promise<number> {
  const result = await db.deleteFrom('oauth_consents').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export const listConsents = (db: Executor, userId: string) =>
  db
    .selectFrom('oauth_consents as c')
    .innerJoin('oauth_clients as k', 'k.id', 'c.client_id')
    .select(['c.client_id', 'k.name', 'c.scopes', 'c.created_at', 'c.updated_at'])
    .where('c.user_id', '=', userId)
    .orderBy('c.created_at')
    .execute();
