import { SignJWT, jwtVerify, decodeProtectedHeader, type JWTPayload } from 'jose';
import { webcrypto } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from './clock.js';

export interface SignOptions {
  typ: string;
  expiresInSec: number;
  audience?: string;
}

export interface VerifiedJwt {
  typ: string;
  payload: JWTPayload & Record<string, unknown>;
}

/**
 * HS256 JWTs with one key imported once as a CryptoKey (twice as fast as a KeyObject per
 * verify, PERFORMANCE.md). Verified tokens are cached by their exact string until they
 * expire, so a hot token costs a map lookup; revocation is checked separately by callers.
 */
export class JwtCodec {
  private readonly cache = new LRUCache<string, VerifiedJwt>({ max: 10_000, ttl: 3_600_000 });
  private key: webcrypto.CryptoKey | null = null;

  constructor(
    private readonly rawKey: Buffer,
    private readonly issuer: string,
    private readonly clock: Clock,
  ) {}

  private async cryptoKey(): Promise<webcrypto.CryptoKey> {
    this.key ??= await webcrypto.subtle.importKey('raw', this.rawKey, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]);
    return this.key;
  }

  async sign(claims: Record<string, unknown>, options: SignOptions): Promise<string> {
    const nowSec = Math.floor(this.clock.now().getTime() / 1000);
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: options.typ })
      .setIssuer(this.issuer)
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + options.expiresInSec);
    if (options.audience) jwt.setAudience(options.audience);
    return jwt.sign(await this.cryptoKey());
  }

  /** Returns the verified token, or null for anything malformed, forged, expired or of another typ. */
  async verify(token: string, typ: string): Promise<VerifiedJwt | null> {
    const nowSec = this.clock.now().getTime() / 1000;
    const hit = this.cache.get(token);
    if (hit) return hit.typ === typ && (hit.payload.exp ?? 0) > nowSec ? hit : null;
    try {
      const header = decodeProtectedHeader(token);
      if (header.typ !== typ) return null;
      const { payload } = await jwtVerify(token, await this.cryptoKey(), {
        algorithms: ['HS256'],
        issuer: this.issuer,
        typ,
        currentDate: this.clock.now(),
        requiredClaims: ['exp', 'iat', 'sub'],
      });
      const verified: VerifiedJwt = { typ, payload: payload as VerifiedJwt['payload'] };
      const ttl = Math.max(1, Math.floor(((payload.exp ?? 0) - nowSec) * 1000));
      this.cache.set(token, verified, { ttl });
      return verified;
    } catch {
      return null;
    }
  }

  /** The typ header of a compact JWT without verifying it, or null when it is not one. */
  static peekTyp(token: string): string | null {
    try {
      return decodeProtectedHeader(token).typ ?? null;
    } catch {
      return null;
    }
  }
}
