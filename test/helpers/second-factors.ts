import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/** A TOTP code of `secret` (base32) at `at`, computed as an authenticator app would (otpauth, RFC 6238 defaults). */
export const totpAt = (secret: string, at: Date, offsetSteps = 0): string =>
  TOTP.generate({
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    timestamp: at.getTime() + offsetSteps * 30_000,
  });

const b64 = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
interface RequestOptions {
  challenge: string;
  rpId?: string;
}

/**
 * A software authenticator for the HTTP tests: an ES256 key pair and a signature counter, making
 * WebAuthn answers (attestation "none") the way a browser and a device would, so the server's
 * real checks (challenge, origin, RP ID, user verification, signature, counter) can each be made
 * to fail. The browser tests use Chromium's virtual authenticator instead.
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly keys: { publicKey: KeyObject; privateKey: KeyObject } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
  });
  counter = 0;
  userHandle: string | null = null;

  constructor(
    readonly origin: string,
    readonly rpId: string,
  ) {}

  get id(): string {
    return b64(this.credentialId);
  }

  private authData(flags: number, attested: boolean): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const parts = [sha256(this.rpId), Buffer.from([flags]), counter];
    if (attested) {
      const jwk = this.keys.publicKey.export({ format: 'jwk' }) as { x: string; y: string };
      const cose = isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x, 'base64url')],
          [-3, Buffer.from(jwk.y, 'base64url')],
        ]),
      );
      const length = Buffer.alloc(2);
      length.writeUInt16BE(this.credentialId.length);
      parts.push(Buffer.alloc(16), length, this.credentialId, Buffer.from(cose));
    }
    return Buffer.concat(parts);
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** The answer to registration options. `verified: false` leaves the user-verification flag off. */
  register(options: CreationOptions, overrides: { origin?: string; verified?: boolean } = {}) {
    this.userHandle = options.user.id;
    const flags = 0x01 | (overrides.verified === false ? 0 : 0x04) | 0x40;
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(this.authData(flags, true))],
      ]) as never,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64(this.clientData('webauthn.create', options.challenge, overrides.origin ?? this.origin)),
        attestationObject: b64(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /**
   * The answer to authentication options: the counter moves on by one unless `counter` sets it
   * (a cloned authenticator replays an old one).
   */
  authenticate(options: RequestOptions, overrides: { origin?: string; counter?: number; challenge?: string } = {}) {
    this.counter = overrides.counter ?? this.counter + 1;
    const authenticatorData = this.authData(0x01 | 0x04, false);
    const clientDataJSON = this.clientData(
      'webauthn.get',
      overrides.challenge ?? options.challenge,
      overrides.origin ?? this.origin,
    );
    const signature = createSign('SHA256')
      .update(Buffer.concat([authenticatorData, sha256(clientDataJSON)]))
      .sign(this.keys.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64(clientDataJSON),
        authenticatorData: b64(authenticatorData),
        signature: b64(signature),
        userHandle: this.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }
}
