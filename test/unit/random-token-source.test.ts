import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomTokenSource } from '../../src/lib/crypto.js';

describe('randomTokenSource', () => {
  it('gives 256-bit base64url tokens, none twice, across block boundaries', () => {
    // Blocks of 80 bytes: two tokens each, then a new block (16 bytes of each block left unused).
    const next = randomTokenSource(80);
    const tokens = Array.from({ length: 1000 }, () => next());
    for (const token of tokens) assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(new Set(tokens).size, tokens.length);
    assert.equal(next(64).length, 86, 'a token larger than a block gets a block of its own');
  });

  it('tokens are not made of zeroed bytes: each slice is zeroed only after it is encoded', () => {
    const next = randomTokenSource(64);
    const zero = Buffer.alloc(32).toString('base64url');
    for (let i = 0; i < 100; i++) assert.notEqual(next(), zero);
  });
});
