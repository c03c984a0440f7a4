import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Secrets } from './secrets.js';

/** Raised when a sealed value was tampered with, or its key is not in the keyring. */
export class SealError extends Error {}

/**
 * A value sealed with a key this process's keyring lacks (a rotation elsewhere it has not
 * heard of): not a broken value but a node the operator must give the key to, which the
 * kernel answers as 503 NOT_CONFIGURED (docs/postgres.md, Secrets).
 */
export class MissingCredentialKeyError extends SealError {
  constructor(readonly keyId: string) {
    super(`credential key ${keyId} is not in the keyring`);
    this.name = 'MissingCredentialKeyError';
  }
}

/**
 * AES-256-GCM with a random 96-bit IV per value and the key id in the clear, so a rotation
 * can find what each value was sealed with. Format: v1.<keyId>.<iv>.<tag>.<ciphertext>
 * (base64url parts). `context` is bound as additional authenticated data: a value moved to
 * another row or column (say, another instance's credentials) fails to open.
 */
export function seal(
  secrets: Pick<Secrets, 'credentialKeys' | 'activeCredentialKeyId'>,
  plaintext: string,
  context: string,
): string {
  const keyId = secrets.activeCredentialKeyId;
  const key = secrets.credentialKeys.get(keyId);
  if (!key) throw new SealError(`credential key ${keyId} is missing`);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    'v1',
    keyId,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ciphertext.toString('base64url'),
  ].join('.');
}

export function sealedKeyId(sealed: string): string | null {
  const parts = sealed.split('.');
  return parts.length === 5 && parts[0] === 'v1' ? parts[1] : null;
}

export function open(secrets: Pick<Secrets, 'credentialKeys'>, sealed: string, context: string): string {
  const [version, keyId, ivText, tagText, dataText, extra] = sealed.split('.');
  if (version !== 'v1' || !keyId || !ivText || !tagText || dataText === undefined || extra !== undefined)
    throw new SealError('sealed value is malformed');
  const key = secrets.credentialKeys.get(keyId);
  if (!key) throw new MissingCredentialKeyError(keyId);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText, 'base64url'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tagText, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(dataText, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError('sealed value failed authentication (tampered, or sealed for another context)');
  }
}

/** Re-encrypts under the active key; a value already under it comes back unchanged. */
export function reseal(
  secrets: Pick<Secrets, 'credentialKeys' | 'activeCredentialKeyId'>,
  sealed: string,
  context: string,
): string {
  if (sealedKeyId(sealed) === secrets.activeCredentialKeyId) return sealed;
  return seal(secrets, open(secrets, sealed, context), context);
}
