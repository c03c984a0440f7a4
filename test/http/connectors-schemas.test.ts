import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { customInstance } from '../helpers/custom-tools.js';

type App = ReturnType<typeof withJson>;
type Detail = { field: string; message: string; type: string };
const C = '/api/v1/connectors';

describe('connector JSON Schemas: linear-time patterns, bounded size and memory', () => {
  let t: App;
  let mcp: McpFake;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    mcp = await startLegacyMcpServer({
      tools: [
        {
          name: 'lookahead',
          inputSchema: { type: 'object', properties: { x: { type: 'string', pattern: '^(?!admin$).*' } } },
        },
        { name: 'plain', inputSchema: { type: 'object', properties: { x: { type: 'string', pattern: '^[a-z]+$' } } } },
      ],
    });
  });
  after(async () => {
    await mcp.close();
    await t.close();
  });

  it('answers at once when ^(a+)+$ meets 40 a\'s and a "!", in a tool inputSchema and in a configSchema; the process stays responsive', async () => {
    // Backtracking would block the process for hours on this input: the probe runs in a child
    // process that is killed past the bound, so a regression fails instead of hanging the suite.
    // Its compiled copy in a run of test/run.mjs (docs/postgres.md, Tests); the TypeScript
    // through tsx otherwise, which costs the child seconds of compiling first.
    const compiled = fileURLToPath(new URL('../helpers/redos-probe.js', import.meta.url));
    const probe = existsSync(compiled)
      ? [compiled]
      : ['--import', 'tsx', fileURLToPath(new URL('../helpers/redos-probe.ts', import.meta.url))];
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, probe, { timeout: 120_000, killSignal: 'SIGKILL' }, (err, stdout) =>
        err ? reject(new Error(`the probe did not answer: ${err.message}`)) : resolve(stdout),
      ),
    );
    const result = JSON.parse(out.trim().split('\n').pop()!);
    assert.equal(result.def, 201);
    assert.equal(result.instance, 201);
    assert.equal(result.tool, 201);
    assert.equal(result.config.status, 400);
    assert.equal(result.config.body.error.code, 'VALIDATION_FAILED');
    assert.deepEqual(
      result.config.body.error.details.map((d: Detail) => [d.field, d.type]),
      [['config.x', 'jsonschema.pattern']],
    );
    assert.equal(result.invoke.status, 400);
    assert.equal(result.invoke.body.error.code, 'VALIDATION_FAILED');
    assert.deepEqual(
      result.invoke.body.error.details.map((d: Detail) => [d.field, d.type]),
      [['input.x', 'jsonschema.pattern']],
    );
    assert.equal(result.health, 200);
  });

  it('refuses at save time, naming the path, patterns RE2 cannot run (lookarounds, backreferences); nothing is stored', async () => {
    const { h, id, addTool } = await customInstance(t);
    const res = await addTool(
      { type: 'object', properties: { code: { type: 'string', pattern: '^(?=\\d)\\w+$' } } },
      'lookahead',
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'VALIDATION_FAILED');
    assert.deepEqual(
      res.json().error.details.map((d: Detail) => [d.field, d.type]),
      [['inputSchema.properties.code.pattern', 'jsonschema.pattern']],
    );
    assert.equal(
      (await t.app.kernel.db.selectFrom('connector_tools').select('id').where('instance_id', '=', id).execute()).length,
      0,
    );

    const key = `backref-${Date.now()}`;
    const def = await t.inject({
      method: 'POST',
      url: `${C}/definitions`,
      headers: h,
      payload: {
        key,
        name: 'B',
        configSchema: { type: 'object', patternProperties: { '^(a)\\1$': { type: 'string' } } },
      },
    });
    assert.equal(def.statusCode, 400);
    assert.deepEqual(
      def.json().error.details.map((d: Detail) => [d.field, d.type]),
      [['configSchema.patternProperties.^(a)\\1$', 'jsonschema.pattern']],
    );
    assert.equal(
      await t.app.kernel.db.selectFrom('connector_definitions').select('id').where('key', '=', key).executeTakeFirst(),
      undefined,
    );

    // RE2 syntax that is also ECMA-262 keeps working: classes, \d, \p{L}, \u escapes, bounded repeats.
    const ok = await addTool({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^\\p{L}[\\w\\u00e9-]{1,8}\\d{2}$' } },
    });
    assert.equal(ok.statusCode, 201);
    const toolId = ok.json().data.id;
    const invoke = (a: string) =>
      t.inject({
        method: 'POST',
        url: `${C}/instances/${id}/tools/${toolId}/invoke`,
        headers: h,
        payload: { input: { a } },
      });
    // Valid input reaches the adapter check (this custom connector has none): 409, not a 400.
    assert.equal((await invoke('éab-c12')).json().error.code, 'CONFLICT');
    const bad = await invoke('1ab');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.details[0].field, 'input.a');
  });

  it('an upstream tool whose schema RE2 cannot run is synced as sent, and invoking it answers 409 without calling the server', async () => {
    const { owner } = await makeTeam(t.app);
    const h = owner.headers;
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: 'mcp-generic', displayName: 'M', config: { url: mcp.url } },
      })
    ).json().data;
    const sync = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
    assert.equal(sync.statusCode, 200);
    const tools = sync.json().data as Array<{ id: string; toolKey: string; inputSchema: unknown }>;
    const lookahead = tools.find((x) => x.toolKey === 'lookahead')!;
    assert.deepEqual(lookahead.inputSchema, {
      type: 'object',
      properties: { x: { type: 'string', pattern: '^(?!admin$).*' } },
    });

    const res = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools/${lookahead.id}/invoke`,
      headers: h,
      payload: { input: { x: 'admin' } },
    });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().error.code, 'CONFLICT');
    assert.deepEqual(
      res.json().error.details.map((d: Detail) => [d.field, d.type]),
      [['schema.properties.x.pattern', 'jsonschema.pattern']],
    );
    assert.equal(mcp.calls.length, 0, 'nothing unchecked reached the server');

    const plain = tools.find((x) => x.toolKey === 'plain')!;
    const ok = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools/${plain.id}/invoke`,
      headers: h,
      payload: { input: { x: 'abc' } },
    });
    assert.equal(ok.statusCode, 200, ok.payload);
    assert.deepEqual(mcp.calls, [{ name: 'plain', args: { x: 'abc' } }]);
  });

  it('caps schemas (64 KiB, 500 objects, 32 levels) and validated input (256 KiB) with 400s naming the field', async () => {
    const { h, id, addTool } = await customInstance(t);
    const bytes = await addTool({ type: 'object', description: 'x'.repeat(70 * 1024) });
    assert.equal(bytes.statusCode, 400);
    assert.deepEqual(
      bytes.json().error.details.map((d: Detail) => [d.field, d.type]),
      [['inputSchema', 'jsonschema.size']],
    );
    const many = await addTool({
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`p${i}`, { type: 'string' }])),
    });
    assert.equal(many.statusCode, 400);
    assert.deepEqual(
      many.json().error.details.map((d: Detail) => [d.field, d.type]),
      [['inputSchema', 'jsonschema.size']],
    );
    let deep: Record<string, unknown> = { type: 'string' };
    // 41 levels: past the schema bound (32), within the kernel's bound on any JSON body (64).
    for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { a: deep } };
    const nested = await addTool(deep);
    assert.equal(nested.statusCode, 400);
    assert.equal(nested.json().error.details[0].type, 'jsonschema.depth');

    const tool = (await addTool({ type: 'object', properties: { list: { type: 'array', uniqueItems: true } } })).json()
      .data;
    const invoke = (input: unknown) =>
      t.inject({ method: 'POST', url: `${C}/instances/${id}/tools/${tool.id}/invoke`, headers: h, payload: { input } });
    const big = await invoke({ list: ['x'.repeat(300 * 1024)] });
    assert.equal(big.statusCode, 400);
    assert.deepEqual(
      big.json().error.details.map((d: Detail) => [d.field, d.type]),
      [['input', 'jsonschema.size']],
    );
    // uniqueItems compares each item once (ajv compares object items pair by pair).
    const list = Array.from({ length: 10_000 }, (_, i) => ({ n: i }));
    list.push({ n: 5 });
    const dup = await invoke({ list });
    assert.equal(dup.statusCode, 400);
    assert.deepEqual(dup.json().error.details, [
      {
        field: 'input.list',
        message: 'must NOT have duplicate items (items ## 5 and 10000 are identical)',
        type: 'jsonschema.uniqueItems',
      },
    ]);
  });

  it('keeps compiled schemas in a cache bounded by size, and ajv itself retains none of them', async () => {
    const { addTool } = await customInstance(t);
    const engine = t.app.services.connectors.definitions.schemas;
    const before = await engine.stats();
    // 45 distinct 60 KB schemas: their estimated weight is past the cache's bound.
    for (let i = 0; i < 45; i++) {
      const res = await addTool(
        {
          type: 'object',
          description: `${i}`.padEnd(60 * 1024, '.'),
          properties: { n: { type: 'integer', minimum: i } },
        },
        `big-${i}`,
      );
      assert.equal(res.statusCode, 201);
    }
    const after = await engine.stats();
    assert.ok(after.cachedBytes <= after.maxBytes, `${after.cachedBytes} > ${after.maxBytes}`);
    assert.ok(after.cached < before.cached + 45, 'older validators were evicted');
    assert.deepEqual(after.ajvRetained, before.ajvRetained, 'the long-lived ajv instance holds no user schema');
  });
});
