import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Sealed values: secrets at rest (provider API keys, connector credentials) encrypted with
 * AES-256-GCM under a key of the credential keyring. Each value gets a fresh random 12-byte
 * IV and carries its key id, so a rotation can re-seal everything under a new key while old
 * values still open. Optional associated data binds a value to where it is stored (a table,
 * a row id): a ciphertext copied into another row then fails to open.
 *
 * Text form: `gcm1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts).
 */
export interface Keyring {
  activeKeyId: string;
  keys: ReadonlyMap<string, Buffer>;
}

const VERSION = 'gcm1';
const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The keyring of the credential keys in secrets.json (or GANTRY_SECRET_CREDENTIAL_KEY). */
export function credentialKeyring(secrets: { activeCredentialKeyId: string; credentialKeys: ReadonlyMap<string, Buffer> }): Keyring {
  return { activeKeyId: secrets.activeCredentialKeyId, keys: secrets.credentialKeys };
}

export class SealedValueError extends Error {}

function keyFor(keyring: Keyring, keyId: string): Buffer {
  const key = keyring.keys.get(keyId);
  if (!key || key.length !== 32) throw new SealedValueError(`credential key ${keyId} is not in the keyring`);
  return key;
}

/** Encrypts `plaintext` under the active key. */
export function seal(keyring: Keyring, plaintext: string, associatedData = ''): string {
  const keyId = keyring.activeKeyId;
  if (!KEY_ID.test(keyId)) throw new SealedValueError('credential key ids are 1-64 letters, digits, _ or -');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(keyring, keyId), iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** The id of the key a sealed value was encrypted under (for rotation). */
export function sealedKeyId(sealed: string): string {
  const parts = sealed.split('.');
  if (parts.length !== 5 || parts[0] !== VERSION) throw new SealedValueError('not a sealed value');
  return parts[1];
}

/** Decrypts a sealed value; throws SealedValueError when it was tampered with or the key is gone. */
export function open(keyring: Keyring, sealed: string, associatedData = ''): string {
  const parts = sealed.split('.');
  if (parts.length !== 5 || parts[0] !== VERSION) throw new SealedValueError('not a sealed value');
  const [, keyId, ivText, tagText, bodyText] = parts;
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  if (iv.length !== 12 || tag.length !== 16) throw new SealedValueError('not a sealed value');
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(keyring, keyId), iv);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(Buffer.from(bodyText, 'base64url')), decipher.final()]).toString('utf8');
  } catch (err) {
    if (err instanceof SealedValueError) throw err;
    throw new SealedValueError('the sealed value does not open (tampered, or sealed for another place)');
  }
}

/** Re-encrypts under the active key; values already under it are returned unchanged. */
export function reseal(keyring: Keyring, sealed: string, associatedData = ''): string {
  if (sealedKeyId(sealed) === keyring.activeKeyId) return sealed;
  return seal(keyring, open(keyring, sealed, associatedData), associatedData);
}
