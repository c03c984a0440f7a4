import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { open, reseal, seal, SealError, sealedKeyId } from '../../src/lib/sealed.js';

const keyring = (id: string) => ({ credentialKeys: new Map([[id, randomBytes(32)]]), activeCredentialKeyId: id });

describe('sealed values (AES-256-GCM)', () => {
  it('round-trips, with a fresh IV each time and the key id in the clear', () => {
    const k = keyring('k1');
    const a = seal(k, 'secret value', 'ctx');
    const b = seal(k, 'secret value', 'ctx');
    assert.notEqual(a, b);
    assert.equal(sealedKeyId(a), 'k1');
    assert.ok(!a.includes('secret value'));
    assert.equal(open(k, a, 'ctx'), 'secret value');
  });

  it('detects tampering, a foreign context and an unknown key', () => {
    const k = keyring('k1');
    const sealed = seal(k, 'secret value', 'ctx');
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[4], 'base64url');
    flipped[0] ^= 1;
    parts[4] = flipped.toString('base64url');
    assert.throws(() => open(k, parts.join('.'), 'ctx'), SealError);
    assert.throws(() => open(k, sealed, 'other-ctx'), SealError);
    assert.throws(() => open(keyring('k2'), sealed, 'ctx'), SealError);
    assert.throws(() => open(k, 'garbage', 'ctx'), SealError);
  });

  it('reseals under the active key, leaving values already under it alone', () => {
    const k = keyring('k1');
    const old = seal(k, 'secret value', 'ctx');
    const rotated = {
      credentialKeys: new Map([...k.credentialKeys, ['k2', randomBytes(32)]]),
      activeCredentialKeyId: 'k2',
    };
    const resealed = reseal(rotated, old, 'ctx');
    assert.equal(sealedKeyId(resealed), 'k2');
    assert.equal(open(rotated, resealed, 'ctx'), 'secret value');
    assert.equal(reseal(rotated, resealed, 'ctx'), resealed);
  });
});
