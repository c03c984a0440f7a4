import { createHash, createHmac, randomBytes, randomFillSync, scrypt, timingSafeEqual } from 'node:crypto';

/** A random opaque secret, base64url; 32 bytes = 256 bits unless told otherwise. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * randomToken for a hot path: the CSPRNG's bytes drawn a block at a time (as Node's own
 * randomUUID does), each token cut from the block and its bytes zeroed once encoded. One
 * randomBytes call per token costs ten times the rest of making it (PERFORMANCE.md).
 */
export function randomTokenSource(blockBytes = 4096): (bytes?: number) => string {
  let block = Buffer.alloc(0);
  let at = 0;
  return (bytes = 32) => {
    if (at + bytes > block.length) {
      block = randomFillSync(Buffer.allocUnsafe(Math.max(blockBytes, bytes)));
      at = 0;
    }
    const slice = block.subarray(at, at + bytes);
    at += bytes;
    const token = slice.toString('base64url');
    slice.fill(0);
    return token;
  };
}

/** A short numeric code (for codes a person types), uniformly drawn. */
export function randomDigits(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomBytes(1)[0];
    if (byte < 250) out += String(byte % 10);
  }
  return out;
}

export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

export function sha1Hex(value: string | Buffer): string {
  return createHash('sha1').update(value).digest('hex');
}

export function hmacSha256(key: Buffer | string, value: string | Buffer): Buffer {
  return createHmac('sha256', key).update(value).digest();
}

/** Constant-time string equality (lengths are compared first, which leaks only the length). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function scryptAsync(password: string, salt: Buffer, keylen: number, cost: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, { N: cost, r: 8, p: 1, maxmem: 256 * cost * 8 + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Password hash in a self-describing form: scrypt$N$salt$hash (base64url parts). */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, 32, cost);
  return `scrypt$${cost}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, costText, saltText, hashText] = stored.split('$');
  if (scheme !== 'scrypt' || !costText || !saltText || !hashText) return false;
  const expected = Buffer.from(hashText, 'base64url');
  const key = await scryptAsync(password, Buffer.from(saltText, 'base64url'), expected.length, Number(costText));
  return timingSafeEqual(key, expected);
}
