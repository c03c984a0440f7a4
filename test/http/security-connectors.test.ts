import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam, signedInUser } from '../helpers/factories.js';
import { addMember } from '../helpers/tenancy.js';
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

  it('a workspace viewer reads connectors but cannot create, delete or store credentials', async () => {
    const { owner, account } = await makeTeam(t.app);
    const victor = await signedInUser(t.app);
    const wendy = await signedInUser(t.app);
    await addMember(t.app, account.id, victor.user.id, 'member');
    await addMember(t.app, account.id, wendy.user.id, 'member');
    const finance = (await t.inject({ method: 'POST', url: `/api/v1/accounts/${account.id}/workspaces`, headers: owner.headers, payload: { name: 'Finance' } })).json().data;
    for (const [user, role] of [[victor, 'viewer'], [wendy, 'member']] as const) {
      const added = await t.inject({ method: 'POST', url: `/api/v1/accounts/${account.id}/workspaces/${finance.id}/members`, headers: owner.headers, payload: { chainerId: user.user.id, role } });
      assert.equal(added.statusCode, 201, added.body);
    }
    const inFinance = (headers: Record<string, string>) => ({ ...headers, 'x-workspace-id': finance.id });
    const inst = (await t.inject({ method: 'POST', url: `${C}/instances`, headers: inFinance(owner.headers), payload: { connectorKey: 'mcp-generic', displayName: 'Ledger', config: { url: prod.url } } })).json().data;
    const attempts = [
      { method: 'POST', url: `${C}/instances`, payload: { connectorKey: 'mcp-generic', displayName: 'Mine', config: { url: evil.url } } },
      { method: 'POST', url: `${C}/instances/${inst.id}/credentials`, payload: { credType: 'bearer_token', credentials: { token: 'viewer-token-1' } } },
      { method: 'PATCH', url: `${C}/instances/${inst.id}`, payload: { displayName: 'Renamed' } },
      { method: 'POST', url: `${C}/instances/${inst.id}/test` },
      { method: 'POST', url: `${C}/definitions`, payload: { key: `viewer-def-${Date.now()}`, name: 'V' } },
      { method: 'DELETE', url: `${C}/instances/${inst.id}` },
    ];
    for (const attempt of attempts) {
      const res = await t.inject({ ...attempt, headers: inFinance(victor.headers) });
      assert.equal(res.statusCode, 403, `${attempt.method} ${attempt.url}`);
      assert.equal(res.json().error.code, 'FORBIDDEN');
    }
    const rows = await t.app.kernel.db.selectFrom('connector_instances').select(['id', 'display_name']).where('workspace_id', '=', finance.id).execute();
    assert.deepEqual(rows, [{ id: inst.id, display_name: 'Ledger' }]);
    assert.equal(await t.app.kernel.db.selectFrom('connector_credentials').select('id').where('instance_id', '=', inst.id).executeTakeFirst(), undefined);
    // Reads still work for the viewer; a workspace member writes.
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: inFinance(victor.headers) })).json().data.displayName, 'Ledger');
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances`, headers: inFinance(victor.headers) })).json().data.length, 1);
    assert.equal((await t.inject({ method: 'POST', url: `${C}/instances`, headers: inFinance(wendy.headers), payload: { connectorKey: 'mcp-generic', displayName: 'W', config: { url: prod.url } } })).statusCode, 201);
    // Victor is a workspace member of the default workspace: he writes there.
    assert.equal((await t.inject({ method: 'POST', url: `${C}/instances`, headers: victor.headers, payload: { connectorKey: 'mcp-generic', displayName: 'D', config: { url: prod.url } } })).statusCode, 201);
    // Removed from the default workspace, he still reads it as an account member but no longer writes.
    const removed = await t.inject({ method: 'DELETE', url: `/api/v1/accounts/${account.id}/workspaces/${account.defaultWorkspaceId}/members/${victor.user.id}`, headers: owner.headers });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances`, headers: victor.headers })).statusCode, 200);
    const refused = await t.inject({ method: 'POST', url: `${C}/instances`, headers: victor.headers, payload: { connectorKey: 'mcp-generic', displayName: 'D2', config: { url: prod.url } } });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error.code, 'FORBIDDEN');
  });
});
