import type { Insertable } from 'kysely';
import type { Executor } from '../db/tx.js';
import type { UserPasskeysTable, UserRecoveryCodesTable } from './tables.js';

/** Every SQL statement of the second factors' tables (docs/identity.md): TOTP, recovery codes, passkeys. */

export const findTotp = (db: Executor, userId: string) =>
  db.selectFrom('user_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();

/** A new pending setup, replacing an earlier pending one; an enabled secret is never replaced here. */
export async function savePendingTotp(db: Executor, userId: string, secretSealed: string, at: string): Promise<void> {
  await db.deleteFrom('user_totp').where('user_id', '=', userId).where('enabled_at', 'is', null).execute();
  await db
    .insertInto('user_totp')
    .values({ user_id: userId, secret_sealed: secretSealed, enabled_at: null, last_used_step: null, created_at: at })
    .execute();
}

/** Turns a pending setup on, recording the step of the code that proved it; false if it was not pending. */
export async function enableTotp(db: Executor, userId: string, step: number, at: string): Promise<boolean> {
  const res = await db
    .updateTable('user_totp')
    .set({ enabled_at: at, last_used_step: step })
    .where('user_id', '=', userId)
    .where('enabled_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Accepts a code of time step `step` only if no code of that step or a later one was accepted:
 * one conditional update, so of two racing uses of one code exactly one wins (RFC 6238 5.2).
 */
export async function claimTotpStep(db: Executor, userId: string, step: number): Promise<boolean> {
  const res = await db
    .updateTable('user_totp')
    .set({ last_used_step: step })
    .where('user_id', '=', userId)
    .where('enabled_at', 'is not', null)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export const deleteTotp = (db: Executor, userId: string) =>
  db.deleteFrom('user_totp').where('user_id', '=', userId).execute();

/** Whether the user has two-step sign-in turned on, and how many passkeys: what asks for a factor. */
export async function factorCounts(db: Executor, userId: string) {
  const totp = await db
    .selectFrom('user_totp')
    .select('enabled_at')
    .where('user_id', '=', userId)
    .where('enabled_at', 'is not', null)
    .executeTakeFirst();
  const passkeys = await db
    .selectFrom('user_passkeys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  const codes = await db
    .selectFrom('user_recovery_codes')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return {
    totpEnabledAt: totp?.enabled_at ?? null,
    passkeys: Number(passkeys.n),
    recoveryCodesLeft: Number(codes.n),
  };
}

export async function replaceRecoveryCodes(
  db: Executor,
  userId: string,
  rows: Insertable<UserRecoveryCodesTable>[],
): Promise<void> {
  await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
  if (rows.length > 0) await db.insertInto('user_recovery_codes').values(rows).execute();
}

/** Uses a recovery code: one conditional update, so a code works once even when sent twice at once. */
export async function useRecoveryCode(db: Executor, userId: string, codeHash: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('user_recovery_codes')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export const deleteRecoveryCodes = (db: Executor, userId: string) =>
  db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();

export const insertPasskey = (db: Executor, row: Insertable<UserPasskeysTable>) =>
  db.insertInto('user_passkeys').values(row).execute();

export const listPasskeys = (db: Executor, userId: string) =>
  db
    .selectFrom('user_passkeys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

export const findPasskeyByCredentialId = (db: Executor, credentialId: string) =>
  db.selectFrom('user_passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();

export async function deletePasskey(db: Executor, userId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('user_passkeys')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/**
 * Moves a passkey's signature counter forward, only from the value the check was made against:
 * two assertions racing with one counter value cannot both pass (WebAuthn L3, 6.1.1).
 */
export async function advancePasskeyCounter(
  db: Executor,
  id: string,
  from: number,
  to: number,
  at: string,
): Promise<boolean> {
  const res = await db
    .updateTable('user_passkeys')
    .set({ counter: to, last_used_at: at })
    .where('id', '=', id)
    .where('counter', '=', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Every second factor of a user, gone (the operator's reset of a user who lost them all); how many of each. */
export async function deleteAllFactors(db: Executor, userId: string) {
  const totp = await db.deleteFrom('user_totp').where('user_id', '=', userId).executeTakeFirst();
  const codes = await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).executeTakeFirst();
  const passkeys = await db.deleteFrom('user_passkeys').where('user_id', '=', userId).executeTakeFirst();
  return {
    twoStep: Number(totp.numDeletedRows) > 0,
    recoveryCodes: Number(codes.numDeletedRows),
    passkeys: Number(passkeys.numDeletedRows),
  };
}
