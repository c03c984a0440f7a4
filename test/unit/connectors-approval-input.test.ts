import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { APPROVAL_INPUT_MAX_CHARS, approvalInputView } from '../../src/connectors/approval-input.js';

describe('approvalInputView', () => {
  it('masks writeOnly and password fields, nested, in arrays, through allOf/anyOf and additionalProperties', () => {
    const schema = {
      type: 'object',
      properties: {
        amount: { type: 'number' },
        token: { type: 'string', writeOnly: true },
        login: {
          type: 'object',
          properties: { user: { type: 'string' }, pin: { type: 'string', format: 'password' } },
        },
        keys: { type: 'array', items: { type: 'string', writeOnly: true } },
        extra: { anyOf: [{ type: 'string' }, { type: 'string', writeOnly: true }] },
        vault: { type: 'object', additionalProperties: { type: 'string', writeOnly: true } },
      },
      allOf: [{ properties: { otp: { type: 'string', writeOnly: true } } }],
    };
    const view = approvalInputView(schema, {
      amount: 5,
      token: 't',
      login: { user: 'u', pin: '1234' },
      keys: ['a', 'b'],
      extra: 'x',
      vault: { a: '1' },
      otp: '9',
      free: 'kept',
    });
    assert.deepEqual(view, {
      input: {
        amount: 5,
        token: '[redacted]',
        login: { user: 'u', pin: '[redacted]' },
        keys: ['[redacted]', '[redacted]'],
        extra: '[redacted]',
        vault: { a: '[redacted]' },
        otp: '[redacted]',
        free: 'kept',
      },
      inputTruncated: false,
      inputCut: [],
    });
  });

  it('leaves an input that fits as it is', () => {
    const input = { note: 'x'.repeat(APPROVAL_INPUT_MAX_CHARS - 23), scope: 'a' };
    assert.deepEqual(approvalInputView({ type: 'object' }, input), { input, inputTruncated: false, inputCut: [] });
  });
});

/** Checks every view: within the budget, and no lone surrogate half (a pair is never split). */
function viewOf(input: unknown) {
  const view = approvalInputView({ type: 'object' }, input);
  const text = JSON.stringify(view.input);
  assert.ok(text.length <= APPROVAL_INPUT_MAX_CHARS, `${text.length} characters`);
  assert.ok(!/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i.test(text), 'no lone high surrogate');
  return { ...view, text };
}

describe('approvalInputView on a long input: no key hidden (N-L6)', () => {
  it('a padded note before the scope: the note is cut, the scope shown whole', () => {
    const { input, inputTruncated, inputCut, text } = viewOf({
      note: 'x'.repeat(16_500),
      scope: 'ALL PRODUCTION DATA',
    });
    const shown = input as { note: string; scope: string };
    assert.equal(shown.scope, 'ALL PRODUCTION DATA');
    const kept = shown.note.indexOf('…');
    assert.ok(kept > 15_000, `${kept} characters of the note kept`);
    assert.equal(shown.note.slice(kept), `…[cut ${(16_500 - kept).toLocaleString('en-US')} characters]`);
    assert.equal(inputTruncated, true);
    assert.deepEqual(inputCut, [{ path: 'note', kind: 'string', originalLength: 16_500 }]);
    assert.ok(text.length > APPROVAL_INPUT_MAX_CHARS - 40, 'the view is used, not wasted');
  });

  it('each long string is cut on its own; short ones, numbers and nested keys stay; paths name them', () => {
    const { input, inputCut } = viewOf({
      a: 'a'.repeat(10_000),
      nested: { 'odd key': 'b'.repeat(10_000), n: 5, ok: true, list: ['short', 'c'.repeat(10_000)] },
      last: 'kept',
    });
    const shown = input as { a: string; nested: Record<string, unknown>; last: string };
    assert.deepEqual(Object.keys(shown), ['a', 'nested', 'last']);
    assert.deepEqual(Object.keys(shown.nested), ['odd key', 'n', 'ok', 'list']);
    assert.equal(shown.last, 'kept');
    assert.equal(shown.nested.n, 5);
    assert.equal((shown.nested.list as string[])[0], 'short');
    assert.deepEqual(inputCut, [
      { path: 'a', kind: 'string', originalLength: 10_000 },
      { path: 'nested["odd key"]', kind: 'string', originalLength: 10_000 },
      { path: 'nested.list[1]', kind: 'string', originalLength: 10_000 },
    ]);
    // Cut to the same length (the longest that fits), so none of them takes the view.
    const lengths = [shown.a, shown.nested['odd key'] as string].map((x) => x.indexOf('…'));
    assert.equal(lengths[0], lengths[1]);
  });

  it('a padded key name is cut like a value; keys that meet after the cut both stay', () => {
    const pad = 'k'.repeat(20_000);
    const { input, inputCut } = viewOf({ [`${pad}1`]: 1, [`${pad}2`]: 2, scope: 'ALL' });
    const keys = Object.keys(input as object);
    assert.equal(keys.length, 3);
    assert.equal(keys[2], 'scope');
    assert.match(keys[0], /^k+…\[cut [\d,]+ characters\]$/);
    assert.equal(keys[1], `${keys[0]} (2)`);
    assert.deepEqual(
      inputCut.map((c) => [c.path, c.kind, c.originalLength]),
      [
        [`["${keys[0]}"]`, 'key', 20_001],
        [`["${keys[1]}"]`, 'key', 20_001],
      ],
    );
  });

  it('escapes and surrogate pairs are measured as JSON writes them', () => {
    for (const unit of ['"', '\\', '\n', '\u0001', '😀', 'é', '\udc00']) {
      const { input, text } = viewOf({ note: unit.repeat(20_000), scope: 'ALL' });
      assert.equal((input as { scope: string }).scope, 'ALL');
      assert.ok(text.length > APPROVAL_INPUT_MAX_CHARS - 40, `${JSON.stringify(unit)}: ${text.length}`);
    }
  });

  it('a nested list too long to show: its first items and a count of the rest, every top-level key kept', () => {
    const targets = Array.from({ length: 10_000 }, (_, i) => i);
    const { input, inputCut } = viewOf({ targets, scope: 'ALL PRODUCTION DATA' });
    const shown = input as { targets: unknown[]; scope: string };
    assert.equal(shown.scope, 'ALL PRODUCTION DATA');
    const marker = shown.targets.at(-1) as string;
    assert.equal(marker, `…[cut ${(10_000 - (shown.targets.length - 1)).toLocaleString('en-US')} more items]`);
    assert.deepEqual(shown.targets.slice(0, 3), [0, 1, 2]);
    assert.deepEqual(inputCut, [{ path: 'targets', kind: 'array', originalLength: 10_000 }]);
  });

  it('thousands of top-level keys: the first ones and a count of the rest, said in inputCut', () => {
    const input = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`key${i}`, i]));
    const view = viewOf(input);
    const keys = Object.keys(view.input as object);
    assert.ok(keys.length > 100 && keys.length < 5_000, `${keys.length} keys shown`);
    assert.deepEqual(keys.slice(0, 2), ['key0', 'key1']);
    assert.equal(keys.at(-1), '…');
    assert.equal(
      (view.input as Record<string, string>)['…'],
      `[cut ${(5_000 - keys.length + 1).toLocaleString('en-US')} more keys]`,
    );
    assert.deepEqual(view.inputCut, [{ path: '', kind: 'object', originalLength: 5_000 }]);
  });

  it('random inputs: always within the view, every top-level key kept unless the top level is cut', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return (seed >>> 8) % n;
    };
    const alphabet = ['a', 'é', '"', '\\', '\n', '\u0002', '😀', ' '];
    const char = () => alphabet[random(alphabet.length)];
    const text = (max: number) => {
      const n = random(max);
      return (char() + char()).repeat(n >> 1) + char().repeat(n & 1);
    };
    // Long strings anywhere; long lists and many keys only right below the top (the sizes stay small).
    const size = (depth: number, big: number) => random(depth === 1 && random(4) === 0 ? big : 6);
    const value = (depth: number): unknown => {
      const pick = random(depth > 3 ? 3 : 5);
      if (pick === 0) return text(random(3) === 0 ? 30_000 : 50);
      if (pick === 1) return random(1_000_000) / 7;
      if (pick === 2) return [true, false, null][random(3)];
      if (pick === 3) return Array.from({ length: size(depth, 3_000) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: size(depth, 2_000) }, () => [text(8), value(depth + 1)]));
    };
    for (let i = 0; i < 100; i++) {
      const input = Object.fromEntries(Array.from({ length: 1 + random(8) }, (_, k) => [`k${k}${text(4)}`, value(1)]));
      const view = viewOf(input);
      if (!view.inputCut.some((c) => c.path === ''))
        assert.deepEqual(Object.keys(view.input as object).length, Object.keys(input).length, `input ${i}`);
    }
  });

  it('a key named __proto__ stays an ordinary key', () => {
    const input = JSON.parse(`{"__proto__": {"admin": true}, "note": "${'x'.repeat(20_000)}"}`);
    const { input: shown } = viewOf(input);
    assert.deepEqual(Object.keys(shown as object), ['__proto__', 'note']);
    assert.equal(Object.getPrototypeOf(shown), Object.prototype);
  });
});
