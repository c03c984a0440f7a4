import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RE2JS } from 're2js';
import { DFA_MAX_BYTES, re2 } from '../../src/connectors/json-schema/ajv.js';
import { createJsonSchemaEngine } from '../../src/connectors/json-schema/engine.js';
import { PATTERN_MAX_PROGRAM, patternCost } from '../../src/connectors/json-schema/pattern-cost.js';
import { DomainError } from '../../src/http/errors.js';
import { createLogger } from '../../src/lib/logger.js';

const program = (pattern: string) => RE2JS.compile(RE2JS.translateRegExp(pattern)).programSize();

describe('JSON Schema patterns: estimated before they are compiled', () => {
  it("estimates RE2's own program size from the syntax (within the two instructions RE2 adds)", () => {
    for (const pattern of [
      '^[a-z]+$',
      '^[a-zA-Z0-9_-]{1,256}$',
      '[^\\x00]{1000}[^\\u0001]{1000}',
      '(?:[^a][^b]){1000}',
      '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}$',
      '(?:a{10}){10}',
      '(a|bc|d)+x?',
      '^\\p{L}[\\w\\u00e9-]{1,8}\\d{2}$',
    ]) {
      const cost = patternCost(pattern);
      assert.ok('program' in cost, `${pattern}: ${JSON.stringify(cost)}`);
      const real = program(pattern);
      assert.ok(cost.program >= real - 4, `${pattern}: estimated ${cost.program}, RE2 has ${real}`);
    }
  });

  it('refuses what RE2 cannot run in linear time, and what compiles past the bound', () => {
    assert.deepEqual(patternCost('^(?=\\d)\\w+$'), {
      refused: 'uses a lookaround, which RE2 cannot run in linear time',
    });
    assert.deepEqual(patternCost('(?<!a)b'), { refused: 'uses a lookaround, which RE2 cannot run in linear time' });
    assert.deepEqual(patternCost('^(a)\\1$'), { refused: 'uses a backreference, which RE2 cannot run in linear time' });
    assert.deepEqual(patternCost('a{1001}'), { refused: 'repeats more than 1000 times' });
    assert.deepEqual(patternCost(`${'('.repeat(300)}a${')'.repeat(300)}`), { refused: 'nests too deeply' });
    assert.match((patternCost('[') as { refused: string }).refused, /^is not a valid regular expression/);
    const big = patternCost('(?:[^a][^b][^c]){1000}');
    assert.match((big as { refused: string }).refused, /^compiles to about 3000 RE2 instructions, more than 2500/);
    assert.ok('program' in patternCost(`[a-z]{1000}[0-9]{1000}[.]{${PATTERN_MAX_PROGRAM - 2_020}}`));
  });

  it("caps each pattern's DFA (re2js internals this relies on) and charges every test to the meter", () => {
    const meter = { remaining: 1_000 };
    const anchored = re2('^[a-z]+$', 'u', meter);
    const unanchored = re2('[ab]*a[ab]{20}[^ab]', 'u', meter);
    // One-pass: one step a character; otherwise the whole program a character.
    assert.equal(anchored.test('abc'), true);
    assert.equal(meter.remaining, 997);
    assert.equal(unanchored.test('ab'), false);
    assert.equal(meter.remaining, 997 - 2 * unanchored.program);
    assert.throws(() => unanchored.test('ab'.repeat(100)), { name: 'Error' });
    const compiled = RE2JS.compile('[ab]*a');
    const inner = (compiled as unknown as { re2Input: { dfa: { maxMem: number }; onepass: unknown; prog: unknown } })
      .re2Input;
    assert.equal(typeof inner.dfa.maxMem, 'number', 're2js keeps its DFA budget in dfa.maxMem');
    assert.ok('onepass' in inner && 'prog' in inner);
    assert.ok(DFA_MAX_BYTES < inner.dfa.maxMem);
  });
});

describe('the schema worker: a job past its time limit ends the worker, and the next job gets a new one', () => {
  it('answers the stuck job 400 jsonschema.cost, and keeps working', async () => {
    let limitMs = 5_000;
    const engine = createJsonSchemaEngine({ logger: createLogger('silent'), jobTimeLimitMs: () => limitMs });
    try {
      await engine.assertSchema({ type: 'object', properties: { a: { type: 'string', pattern: '^a$' } } }, 'schema');
      assert.equal((await engine.stats()).cached, 1);
      // 490 properties each with a format: far longer than 1 ms to compile.
      const heavy = {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 490 }, (_, i) => [`p${i}`, { type: 'string', format: 'email', maxLength: i + 1 }]),
        ),
      };
      limitMs = 1;
      await assert.rejects(engine.assertSchema(heavy, 'inputSchema'), (err: DomainError) => {
        assert.equal(err.code, 'VALIDATION_FAILED');
        assert.deepEqual(err.details, [
          { field: 'inputSchema', message: 'is too costly to check', type: 'jsonschema.cost' },
        ]);
        return true;
      });
      limitMs = 5_000;
      // A pattern: the worker's to check (in-process.ts).
      await engine.assertValid(
        { type: 'object', required: ['a'], properties: { b: { type: 'string', pattern: '^b' } } },
        { a: 1 },
        'input',
        'input',
      );
      // A new worker: the first one's validators went with it.
      assert.equal((await engine.stats()).cached, 1);
    } finally {
      await engine.close();
    }
  });

  it('fails the jobs still waiting when it closes', async () => {
    const engine = createJsonSchemaEngine({ logger: createLogger('silent') });
    await engine.assertValid({ type: 'string', pattern: '^x' }, 'x', 'input', 'input');
    const waiting = assert.rejects(
      engine.assertValid({ type: 'string', pattern: '^x', minLength: 2 }, 'xy', 'input', 'input'),
      /the server is stopping/,
    );
    await engine.close();
    await waiting;
  });
});

describe('small schemas of linear keywords are checked on the main thread, with the answers of the worker', () => {
  const schema = {
    type: 'object',
    required: ['text', 'count'],
    additionalProperties: false,
    properties: {
      text: { type: 'string', minLength: 2, maxLength: 5 },
      count: { type: 'integer', minimum: 0 },
      tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 2 },
      mode: { oneOf: [{ const: 'fast' }, { const: 'slow' }] },
    },
  };
  // The same checks plus a keyword that sends the schema to the worker and changes nothing.
  const viaWorker = { ...schema, definitions: {} };
  const refusal = async (s: Record<string, unknown>, value: unknown) => {
    try {
      await engine.assertValid(s, value, 'input', 'input');
      return null;
    } catch (err) {
      return {
        code: (err as DomainError).code,
        message: (err as Error).message,
        details: (err as DomainError).details as unknown[],
      };
    }
  };
  let engine: ReturnType<typeof createJsonSchemaEngine>;

  it('answers every value as the worker does, without a job in the worker', async () => {
    engine = createJsonSchemaEngine({ logger: createLogger('silent') });
    try {
      const values = [
        { text: 'ok', count: 1 },
        { text: 'x', count: -1, extra: true, tags: ['a', 'c', 'b'], mode: 'slowest' },
        { count: 1.5 },
        'not an object',
      ];
      for (const value of values) {
        const here = await refusal(schema, value);
        assert.deepEqual(here, await refusal(viaWorker, value), JSON.stringify(value));
      }
      assert.equal((await refusal(schema, values[1]))?.details?.length, 8);
      // Only the worker's schema was compiled there.
      assert.equal((await engine.stats()).cached, 1);
    } finally {
      await engine.close();
    }
  });

  it('leaves patterns, formats, uniqueItems, references, large schemas and large values to the worker', async () => {
    engine = createJsonSchemaEngine({ logger: createLogger('silent') });
    try {
      const workers = [
        { type: 'string', pattern: '^a' },
        { type: 'string', format: 'email' },
        { type: 'array', uniqueItems: true },
        { $ref: '#/definitions/a', definitions: { a: { type: 'string' } } },
        { anyOf: Array.from({ length: 70 }, (_, i) => ({ const: i })) },
      ];
      for (const [i, s] of workers.entries()) {
        await refusal(s, 'a');
        assert.equal((await engine.stats()).cached, i + 1, JSON.stringify(s));
      }
      await refusal({ type: 'string' }, 'a'.repeat(20_000));
      assert.equal((await engine.stats()).cached, workers.length + 1);
      await refusal({ type: 'string' }, 'a');
      assert.equal((await engine.stats()).cached, workers.length + 1);
    } finally {
      await engine.close();
    }
  });
});
