import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { customInstance } from '../helpers/custom-tools.js';

type App = ReturnType<typeof withJson>;
type Detail = { field: string; message: string; type: string };
const C = '/api/v1/connectors';

/** Distinct characters for the review's distinct patterns (N-H1 used `\x00`, `\u0001`, ...). */
const ch = (i: number) => `\\u${(i + 1).toString(16).padStart(4, '0')}`;
const stringWith = (patterns: string[]) => ({
  type: 'object',
  properties: { x: { type: 'string', allOf: patterns.map((pattern) => ({ pattern })) } },
});

/**
 * The costliest schema the bounds accept: 4 patterns of 2,470 instructions (10,000 in all), with
 * no literal that would let RE2 skip an input, and about 500 objects; distinct per `seed` so
 * that each is compiled afresh.
 */
function worstAccepted(seed: number) {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 4; i++) {
    const c = 12 * seed + 3 * i;
    properties[`p${i}`] = { type: 'string', pattern: `[^${ch(c)}]{1000}[^${ch(c + 1)}]{1000}[^${ch(c + 2)}]{470}` };
  }
  for (let i = 4; i < 496; i++) properties[`q${i}`] = { type: 'string', maxLength: seed + i };
  return { type: 'object', properties };
}

describe('N-H1: schemas whose patterns compile to huge programs are refused before they are compiled', () => {
  let t: App;
  before(async () => {
    t = withJson(await createTestApp());
  });
  after(async () => {
    await t.close();
  });

  const toolCount = async (instanceId: string) =>
    (await t.app.kernel.db.selectFrom('connector_tools').select('id').where('instance_id', '=', instanceId).execute())
      .length;

  it("refuses the review's 1.5 KB schema of 32 counted repetitions (it froze the server 12.5 s), naming the pattern that passes the schema's bound", async () => {
    const { id, addTool } = await customInstance(t);
    const patterns = Array.from({ length: 32 }, (_, i) => `[^${ch(2 * i)}]{1000}[^${ch(2 * i + 1)}]{1000}`);
    const res = await addTool(stringWith(patterns));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'VALIDATION_FAILED');
    const details = res.json().error.details as Detail[];
    // Each pattern is 2,000 instructions: the first five fit the schema's 10,000, the sixth does not.
    assert.equal(details[0].field, 'inputSchema.properties.x.allOf.5.pattern');
    assert.equal(details[0].type, 'jsonschema.pattern');
    assert.match(details[0].message, /past 10000 RE2 instructions in all/);
    assert.equal(await toolCount(id), 0);
  });

  it("refuses the review's out-of-memory schema (each pattern about 100,000 instructions) per pattern, with its path", async () => {
    const { id, addTool } = await customInstance(t);
    const classes = (i: number) =>
      Array.from({ length: 100 }, (_, k) => `[^${String.fromCharCode(97 + ((i + k) % 26))}]`).join('');
    const res = await addTool(stringWith(Array.from({ length: 3 }, (_, i) => `(?:${classes(i)}){1000}`)));
    assert.equal(res.statusCode, 400);
    assert.deepEqual(
      (res.json().error.details as Detail[]).map((d) => [d.field, d.type]),
      [0, 1, 2].map((i) => [`inputSchema.properties.x.allOf.${i}.pattern`, 'jsonschema.pattern']),
    );
    assert.match(res.json().error.details[0].message, /compiles to about 100000 RE2 instructions, more than 2500/);
    // RE2's own bound on one repetition, and a pattern nested past reason.
    const repeat = await addTool(stringWith(['a{1001}']));
    assert.deepEqual(repeat.json().error.details[0], {
      field: 'inputSchema.properties.x.allOf.0.pattern',
      message: 'repeats more than 1000 times',
      type: 'jsonschema.pattern',
    });
    const many = await addTool(stringWith(Array.from({ length: 65 }, (_, i) => `^${i}$`)));
    assert.equal(many.json().error.details[0].field, 'inputSchema.properties.x.allOf.64.pattern');
    assert.match(many.json().error.details[0].message, /more than the 64 a schema may have/);
    assert.equal(await toolCount(id), 0);
  });

  it('/healthz answers within 100 ms while five of the costliest accepted schemas compile and one runs', async () => {
    const { h, id, addTool } = await customInstance(t);
    const first = await addTool(worstAccepted(0), 'worst-0');
    assert.equal(first.statusCode, 201, first.payload);
    const saves = Array.from({ length: 5 }, (_, i) => addTool(worstAccepted(i + 1), `worst-${i + 1}`));
    const invoke = t.inject({
      method: 'POST',
      url: `${C}/instances/${id}/tools/${first.json().data.id}/invoke`,
      headers: h,
      // 4 x 200 characters x 2,470 instructions: just within one check's pattern work.
      payload: { input: { p0: 'y'.repeat(200), p1: 'y'.repeat(200), p2: 'y'.repeat(200), p3: 'y'.repeat(200) } },
    });
    // /healthz asked again and again while that work goes on: on the main thread, some of them
    // would wait for a compile.
    let busy = true;
    const work = Promise.all([Promise.all(saves), invoke]).finally(() => {
      busy = false;
    });
    const waits: number[] = [];
    while (busy) {
      const asked = performance.now();
      assert.equal((await t.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      waits.push(performance.now() - asked);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const [results] = await work;
    assert.deepEqual(
      results.map((r) => r.statusCode),
      [201, 201, 201, 201, 201],
    );
    // Checked in full: 200 characters are too short for any of the four patterns.
    assert.deepEqual(
      ((await invoke).json().error.details as Detail[]).map((d) => [d.field, d.type]),
      [0, 1, 2, 3].map((i) => [`input.p${i}`, 'jsonschema.pattern']),
    );
    assert.ok(waits.length > 5, `the work ended after ${waits.length} answers of /healthz`);
    assert.ok(Math.max(...waits) < 100, `/healthz waited ${Math.max(...waits).toFixed(0)} ms`);
  });

  it('an input that needs more pattern work than one check may do is a 400 on its field, before any call', async () => {
    const { h, id, addTool } = await customInstance(t);
    // Not one-pass and without a literal to look for: every character costs the whole program.
    const tool = await addTool({
      type: 'object',
      properties: { x: { type: 'string', pattern: '[ab]*a[ab]{400}[^ab]' } },
    });
    assert.equal(tool.statusCode, 201);
    const invoke = (x: string) =>
      t.inject({
        method: 'POST',
        url: `${C}/instances/${id}/tools/${tool.json().data.id}/invoke`,
        headers: h,
        payload: { input: { x } },
      });
    const costly = await invoke('ab'.repeat(5_000));
    assert.equal(costly.statusCode, 400);
    assert.equal(costly.json().error.code, 'VALIDATION_FAILED');
    assert.deepEqual(costly.json().error.details, [
      { field: 'input', message: 'is too costly to check', type: 'jsonschema.cost' },
    ]);
    // The same pattern on a short input is checked as usual.
    const short = await invoke('ab'.repeat(100));
    assert.equal(short.statusCode, 400);
    assert.equal(short.json().error.details[0].type, 'jsonschema.pattern');
  });

  it('weighs cached validators by their compiled patterns: the worker evicts them before its heap grows past the bound', async () => {
    const { addTool } = await customInstance(t);
    const engine = t.app.services.connectors.definitions.schemas;
    // 8 patterns of 1,240 instructions each: little JSON, most of the weight in RE2 programs.
    const heavy = (seed: number) =>
      stringWith(Array.from({ length: 8 }, (_, i) => `[^${ch(2 * i)}]{1000}[^${ch(2 * i + 1)}]{238}${seed}`));
    for (let i = 0; i < 50; i++) assert.equal((await addTool(heavy(i), `heavy-${i}`)).statusCode, 201);
    const stats = await engine.stats();
    assert.ok(stats.cachedBytes <= stats.maxBytes, `${stats.cachedBytes} > ${stats.maxBytes}`);
    assert.ok(stats.cached < 50, `all 50 kept (${stats.cachedBytes} bytes): patterns were not weighed`);
    assert.ok(stats.heapUsedBytes < 200 * 1024 * 1024, `worker heap ${stats.heapUsedBytes}`);
  });
});
