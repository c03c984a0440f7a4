import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { startLegacyMcpServer, startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;

/** Attacks on connectors by members of the same account, each now refused. */
describe('connector security', () => {
  let t: App;
  let prod: McpFake;
  let evil: McpFake;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    prod = await startModernMcpServer({ tools: [{ name: 'delete_all', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } }] });
    evil = await startLegacyMcpServer({ tools: [{ name: 'delete_all', inputSchema: { type: 'object' } }] });
  });
  after(async () => {
    await prod.close();
    await evil.close();
    await t.close();
  });

  const sentTo = (fake: McpFake, secret: string) => fake.requests.filter((r) => JSON.stringify(r.headers).includes(secret)).length;

  it('refuses any credential-looking header in the plain MCP config, and sends custom credentials as headers', async () => {
    const { owner } = await makeTeam(t.app);
    const h = owner.headers;
    for (const name of ['X-Auth-Token', 'Api-Key', 'x-access-token', 'X-Session-Id', 'X-Hub-Signature-256', 'X-Client-Secret', 'X-Password']) {
      const res = await t.inject({ method: 'POST', url: `${C}/instances`, headers: h, payload: { connectorKey: 'mcp-generic', displayName: 'M', config: { url: prod.url, headers: { 'X-Tenant': 'acme', [name]: 'secret-header-1' } } } });
      assert.equal(res.statusCode, 400, name);
      assert.equal(res.json().error.code, 'VALIDATION_FAILED');
      assert.deepEqual(res.json().error.details.map((d: { field: string }) => d.field), [`config.headers.${name}`], name);
    }
    const inst = (await t.inject({ method: 'POST', url: `${C}/instances`, headers: h, payload: { connectorKey: 'mcp-generic', displayName: 'M', config: { url: prod.url, headers: { 'X-Tenant': 'acme' } } } })).json().data;
    const patched = await t.inject({ method: 'PATCH', url: `${C}/instances/${inst.id}`, headers: h, payload: { config: { url: prod.url, headers: { 'X-Auth-Token': 'secret-header-1' } } } });
    assert.equal(patched.statusCode, 400);
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data.config.headers['X-Auth-Token'], undefined);
    // The sealed home of such a header: custom credentials, sent as headers.
    const stored = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/credentials`, headers: h, payload: { credType: 'custom', credentials: { 'X-Auth-Token': 'sealed-header-7' } } });
    assert.equal(stored.statusCode, 200);
    const test = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h });
    assert.equal(test.json().data.healthy, true, test.body);
    assert.ok(prod.requests.some((r) => r.headers['x-auth-token'] === 'sealed-header-7' && r.headers['x-tenant'] === 'acme'));
  });
});
