import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../db/tx.js';
import type { IdpLinksTable, IdpsTable } from './tables.js';

export type IdpRow = Selectable<IdpsTable>;

// Identity providers
export const insertIdp = (db: Executor, row: Insertable<IdpsTable>) => db.insertInto('idps').values(row).execute();
export const findIdp = (db: Executor, id: string) =>
  db.selectFrom('idps').selectAll().where('id', '=', id).executeTakeFirst();
export const findIdpByIssuer = (db: Executor, issuer: string) =>
  db.selectFrom('idps').selectAll().where('issuer', '=', issuer).executeTakeFirst();
export const findIdpByName = (db: Executor, name: string) =>
  db.selectFrom('idps').selectAll().where('name', '=', name).executeTakeFirst();
export const listIdps = (db: Executor) =>
  db.selectFrom('idps').selectAll().orderBy('created_at').orderBy('id').execute();
export const deleteIdp = (db: Executor, id: string) => db.deleteFrom('idps').where('id', '=', id).executeTakeFirst();

// Email domains
export const insertDomain = (db: Executor, idpId: string, domain: string) =>
  db.insertInto('idp_domains').values({ idp_id: idpId, domain }).execute();
export const findDomain = (db: Executor, domain: string) =>
  db.selectFrom('idp_domains').selectAll().where('domain', '=', domain).executeTakeFirst();
export const listDomains = (db: Executor) => db.selectFrom('idp_domains').selectAll().orderBy('domain').execute();
export const deleteDomainsOf = (db: Executor, idpId: string) =>
  db.deleteFrom('idp_domains').where('idp_id', '=', idpId).execute();

// Subject links
export const findLink = (db: Executor, idpId: string, subject: string) =>
  db.selectFrom('idp_links').selectAll().where('idp_id', '=', idpId).where('subject', '=', subject).executeTakeFirst();
export const insertLink = (db: Executor, row: Insertable<IdpLinksTable>) =>
  db.insertInto('idp_links').values(row).execute();
export const deleteLinksOf = (db: Executor, idpId: string) =>
  db.deleteFrom('idp_links').where('idp_id', '=', idpId).executeTakeFirst();

// What an IdP gave rise to
export const recordIssued = (db: Executor, idpId: string, kind: 'session' | 'grant', refId: string, at: string) =>
  db.insertInto('idp_issued').values({ idp_id: idpId, kind, ref_id: refId, created_at: at }).execute();
export const listIssued = (db: Executor, idpId: string) =>
  db.selectFrom('idp_issued').select(['kind', 'ref_id']).where('idp_id', '=', idpId).execute();
export const deleteIssuedOf = (db: Executor, idpId: string) =>
  db.deleteFrom('idp_issued').where('idp_id', '=', idpId).execute();

// ID-JAG replay
/** True when this key is new: the primary key refuses it on every node once it is in (docs/identity-providers.md). */
export async function claimAssertion(db: Executor, keyHash: string, expiresAt: string): Promise<boolean> {
  const result = await db
    .insertInto('idp_used_assertions')
    .values({ key_hash: keyHash, expires_at: expiresAt })
    .onConflict((oc) => oc.column('key_hash').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}
export const deleteExpiredAssertions = (db: Executor, nowIso: string) =>
  db.deleteFrom('idp_used_assertions').where('expires_at', '<=', nowIso).executeTakeFirst();
