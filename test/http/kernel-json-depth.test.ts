import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';

const C = '/api/v1/connectors';

/** `{"a":{"a":...{}}}`, `levels` objects deep, as raw JSON text (about 60 KB at 10,000). */
const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;

/** JSON nested past the kernel's bound (64 levels) is refused before any handler runs. */
describe('deeply nested JSON bodies', () => {
  let t: ReturnType<typeof withJson>;
  let mcp: McpFake;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    mcp = await startLegacyMcpServer({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
  });
  after(async () => {
    await mcp.close();
    await t.close();
  });

  const send = (method: 'POST' | 'PATCH', url: string, body: string, headers: Record<string, string>) =>
    t.inject({ method, url, payload: body, headers: { ...headers, 'content-type': 'application/json' } });

  function assertRefused(res: Awaited<ReturnType<typeof send>>) {
    assert.equal(res.statusCode, 400, res.body);
    const body = res.json();
    assert.equal(body.data, null);
    assert.equal(body.error.code, 'VALIDATION_FAILED');
    assert.match(body.error.message, /nested deeper than 64 levels/);
    assert.ok(body.meta.requestId);
  }

  /** A custom connector whose config may be any object, so only the bound stands in the way. */
  async function openDefinition(h: Record<string, string>): Promise<string> {
    const key = `open-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const res = await t.inject({
      method: 'POST',
      url: `${C}/definitions`,
      headers: h,
      payload: { key, name: 'Open', credType: 'api_key', configSchema: { type: 'object' } },
    });
    assert.equal(res.statusCode, 201, res.body);
    return key;
  }

  it('a connector instance create and PATCH with a 10,000-level config: 400, nothing stored, the server still answers', async () => {
    const { owner } = await makeTeam(t.app, []);
    const h = owner.headers;
    const key = await openDefinition(h);
    const deep = `{"url":${JSON.stringify(mcp.url)},"deep":${nested(10_000)}}`;
    const created = await send(
      'POST',
      `${C}/instances`,
      `{"connectorKey":"${key}","displayName":"Deep","config":${deep}}`,
      h,
    );
    assertRefused(created);
    const list = await t.inject({ method: 'GET', url: `${C}/instances`, headers: h });
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().data.filter((i: { displayName: string }) => i.displayName === 'Deep').length, 0);

    const ok = await send(
      'POST',
      `${C}/instances`,
      JSON.stringify({ connectorKey: key, displayName: 'Shallow', config: { url: mcp.url } }),
      h,
    );
    assert.equal(ok.statusCode, 201, ok.body);
    const id = ok.json().data.id;
    assertRefused(await send('PATCH', `${C}/instances/${id}`, `{"config":${deep}}`, h));
    const after = await t.inject({ method: 'GET', url: `${C}/instances/${id}`, headers: h });
    assert.equal(after.statusCode, 200);
    assert.deepEqual(after.json().data.config, { url: mcp.url });
    assert.ok(!t.logs.some((l) => l.includes('Maximum call stack')));
    assert.ok(!t.logs.some((l) => JSON.parse(l).level === 'error'));
  });

  it('any JSON route: a deep login body is a 400 too; 64 levels still pass the bound', async () => {
    assertRefused(await send('POST', '/api/v1/auth/login', `{"email":${nested(10_000)}}`, {}));
    // The body itself is the first level: 65 in all is refused, 64 reaches joi.
    assertRefused(await send('POST', '/api/v1/auth/login', `{"email":${nested(64)}}`, {}));
    const within = await send('POST', '/api/v1/auth/login', `{"email":${nested(63)}}`, {});
    assert.equal(within.statusCode, 400);
    assert.doesNotMatch(within.json().error.message, /nested deeper/);
    assert.equal((await t.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });

  it('a route with its own error format answers in it (the token endpoint, 16 KB at most: RFC 6749 form)', async () => {
    const res = await send('POST', '/api/v1/oauth/token', `{"grant_type":${nested(1_000)}}`, {});
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_request');
    assert.match(res.json().error_description, /nested deeper than 64 levels/);
  });

  it('a deep array counts like a deep object', async () => {
    const { owner } = await makeTeam(t.app, []);
    const key = await openDefinition(owner.headers);
    assertRefused(
      await send(
        'POST',
        `${C}/instances`,
        `{"connectorKey":"${key}","displayName":"Arr","config":{"url":${JSON.stringify(mcp.url)},"list":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`,
        owner.headers,
      ),
    );
  });
});
