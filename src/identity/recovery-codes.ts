import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../lib/crypto.js';

/**
 * Recovery codes (docs/identity.md): ten per user, each 12 characters of a 31-letter alphabet
 * (60 bits) shown as xxxx-xxxx-xxxx, used once. Stored as SHA-256 of the user id and the code:
 * at 60 bits a leaked table cannot be searched back to the codes, and the user id keeps two
 * users' equal codes apart.
 */
const RECOVERY_CODE_COUNT = 10;
/** No 0/o or 1/l/i: a code read off paper is typed back right. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const LENGTH = 12;

function newCode(): string {
  // Rejection sampling keeps every letter equally likely (256 is not a multiple of 31).
  let code = '';
  while (code.length < LENGTH) {
    for (const byte of randomBytes(LENGTH * 2)) {
      if (byte < 248 && code.length < LENGTH) code += ALPHABET[byte % ALPHABET.length];
    }
  }
  return `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8)}`;
}

export const newRecoveryCodes = (): string[] => Array.from({ length: RECOVERY_CODE_COUNT }, newCode);

/** The form a typed code is compared in: lower case, without spaces and dashes; null when it cannot be one. */
export function recoveryCodeOf(raw: string): string | null {
  const code = raw.toLowerCase().replace(/[\s-]+/g, '');
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : null;
}

export const recoveryCodeHash = (userId: string, code: string): string =>
  sha256Hex(`recovery:${userId}:${recoveryCodeOf(code) ?? code}`);
