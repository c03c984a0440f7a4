import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { open, reseal, seal, sealedKeyId, SealedValueError, type Keyring } from '../../src/lib/sealed.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ring = (active: string): Keyring => ({ activeKeyId: active, keys: new Map([['k1', k1], ['k2', k2]]) });

describe('sealed values (AES-256-GCM)', () => {
  it('round-trips and records the key id', () => {
    const sealed = seal(ring('k1'), 'sk-secret', 'row:1');
    assert.equal(sealedKeyId(sealed), 'k1');
    assert.ok(!sealed.includes('sk-secret'));
    assert.equal(open(ring('k1'), sealed, 'row:1'), 'sk-secret');
  });

  it('uses a fresh 12-byte IV per value', () => {
    const a = seal(ring('k1'), 'same');
    const b = seal(ring('k1'), 'same');
    assert.notEqual(a, b);
    assert.equal(Buffer.from(a.split('.')[2], 'base64url').length, 12);
  });

  it('refuses a tampered ciphertext, another place (associated data) and an unknown key', () => {
    const sealed = seal(ring('k1'), 'sk-secret', 'row:1');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[4], 'base64url');
    body[0] ^= 1;
    parts[4] = body.toString('base64url');
    assert.throws(() => open(ring('k1'), parts.join('.'), 'row:1'), SealedValueError);
    assert.throws(() => open(ring('k1'), sealed, 'row:2'), SealedValueError);
    assert.throws(() => open({ activeKeyId: 'k2', keys: new Map([['k2', k2]]) }, sealed, 'row:1'), /not in the keyring/);
    assert.throws(() => open(ring('k1'), 'plain text'), SealedValueError);
  });

  it('reseals under the active key, leaving current values alone', () => {
    const old = seal(ring('k1'), 'sk-secret', 'a');
    const moved = reseal(ring('k2'), old, 'a');
    assert.equal(sealedKeyId(moved), 'k2');
    assert.equal(open(ring('k2'), moved, 'a'), 'sk-secret');
    assert.equal(reseal(ring('k2'), moved, 'a'), moved);
  });
});
