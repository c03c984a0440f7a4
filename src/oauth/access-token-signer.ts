import { createHmac, type KeyObject, createSecretKey } from 'node:crypto';

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt' })).toString('base64url');

/**
 * Signs RFC 9068 access tokens (HS256, typ at+jwt) with a plain HMAC: the token endpoint's
 * hottest step. jose signs through WebCrypto, an asynchronous hop to the thread pool that
 * costs more than the whole SQLite rotation (PERFORMANCE.md); the bytes are the same compact
 * JWS that kernel.jwt.verify (jose) checks on every use.
 */
export class AccessTokenSigner {
  private readonly key: KeyObject;

  constructor(rawKey: Buffer) {
    this.key = createSecretKey(rawKey);
  }

  sign(claims: Record<string, unknown>): string {
    const input = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${input}.${createHmac('sha256', this.key).update(input).digest('base64url')}`;
  }
}
