import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAppContext, type AppContext } from '../../src/app.js';
import { resolveConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { TOOLS_CHANGED_TOPIC } from '../../src/connectors/types.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { testEnvFor } from '../helpers/postgres.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { addInstance, mcpUser, statelessRpc, type McpUser } from '../helpers/mcp-gateway.js';

// The exposed catalog is kept per workspace (docs/mcp.md, Performance): every change that alters
// what a workspace serves must show in the very next tools/list and tools/call, in this process
// and from another one on the same database.
const C = '/api/v1/connectors';
const ENV = { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' };

let t: TestApp;
let upstream: McpFake;
let user: McpUser;
let instance: Awaited<ReturnType<typeof addInstance>>;

before(async () => {
  t = await createTestApp({ env: ENV });
  upstream = await startLegacyMcpServer({
    tools: [
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'other', inputSchema: { type: 'object' } },
    ],
  });
  user = await mcpUser(t);
  instance = await addInstance(t, user, upstream.url, { displayName: 'Up', toolPrefix: '' });
});
after(async () => {
  await upstream.close();
  await t.close();
});

/** One stateless (2026-07-28) request to the endpoint: its JSON-RPC result or error. */
async function rpc(method: string, params: Record<string, unknown>, name?: string) {
  const res = await statelessRpc(t, user.token, method, params, { name });
  return JSON.parse(res.payload) as {
    result?: { tools?: Array<{ name: string }>; isError?: boolean; content?: Array<{ text: string }> };
    error?: { message: string };
  };
}
const names = async () => (await rpc('tools/list', {})).result!.tools!.map((x) => x.name);
const call = (name: string) => rpc('tools/call', { name, arguments: {} }, name);

async function api(method: string, url: string, payload?: object) {
  const res = await t.inject({ method, url: `${C}${url}`, headers: user.headers, payload });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.payload}`);
  return JSON.parse(res.payload).data;
}

describe('the exposed catalog follows every change at once', () => {
  test('a tool disabled and enabled', async () => {
    assert.deepEqual(await names(), ['echo', 'other']);
    await instance.patchTool('other', { enabled: false });
    assert.deepEqual(await names(), ['echo']);
    assert.match((await call('other')).error!.message, /Unknown tool: other/);
    await instance.patchTool('other', { enabled: true });
    assert.deepEqual(await names(), ['echo', 'other']);
    assert.equal((await call('other')).result!.isError, undefined);
  });

  test('the approval gate raised and lowered', async () => {
    await instance.patchTool('echo', { requiresApproval: true });
    const gated = await call('echo');
    assert.equal(gated.result!.isError, true);
    assert.match(gated.result!.content![0].text, /needs approval/);
    await instance.patchTool('echo', { requiresApproval: false });
    assert.equal((await call('echo')).result!.isError, undefined);
  });

  test('the rate limit set and lifted', async () => {
    await instance.patchTool('other', { rateLimitRpm: 1 });
    assert.equal((await call('other')).result!.isError, undefined);
    assert.match((await call('other')).result!.content![0].text, /allows 1 calls per minute/);
    await instance.patchTool('other', { rateLimitRpm: null });
    assert.equal((await call('other')).result!.isError, undefined);
  });

  test('a sync that brings a tool and drops one', async () => {
    upstream.options.tools = [
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'added', inputSchema: { type: 'object' } },
    ];
    await api('POST', `/instances/${instance.id}/sync-tools`);
    assert.deepEqual(await names(), ['added', 'echo']);
    upstream.options.tools.push({ name: 'other', inputSchema: { type: 'object' } });
    await api('POST', `/instances/${instance.id}/sync-tools`);
    // A deactivated tool that reappears stays disabled until enabled again.
    assert.deepEqual(await names(), ['added', 'echo']);
    await instance.patchTool('other', { enabled: true });
    assert.deepEqual(await names(), ['added', 'echo', 'other']);
  });

  test('the tool prefix and the display name it derives from', async () => {
    await api('PATCH', `/instances/${instance.id}`, { toolPrefix: 'up_' });
    assert.deepEqual(await names(), ['up_added', 'up_echo', 'up_other']);
    assert.equal((await call('up_echo')).result!.isError, undefined);
    await api('PATCH', `/instances/${instance.id}`, { toolPrefix: null, displayName: 'Renamed' });
    assert.deepEqual(await names(), ['renamed__added', 'renamed__echo', 'renamed__other']);
    await api('PATCH', `/instances/${instance.id}`, { toolPrefix: '' });
    assert.deepEqual(await names(), ['added', 'echo', 'other']);
  });

  test('the instance disabled, enabled, then tested active again', async () => {
    await api('PATCH', `/instances/${instance.id}`, { enabled: false });
    assert.deepEqual(await names(), []);
    assert.match((await call('echo')).error!.message, /Unknown tool: echo/);
    // Enabling moves no status: the next test does.
    await api('PATCH', `/instances/${instance.id}`, { enabled: true });
    assert.deepEqual(await names(), []);
    await api('POST', `/instances/${instance.id}/test`);
    assert.deepEqual(await names(), ['added', 'echo', 'other']);
  });

  test('credentials removed (pending_auth), stored again and tested', async () => {
    await api('DELETE', `/instances/${instance.id}/credentials`);
    assert.deepEqual(await names(), []);
    await api('POST', `/instances/${instance.id}/credentials`, {
      credType: 'bearer_token',
      credentials: { token: 'upstream-secret' },
    });
    await api('POST', `/instances/${instance.id}/test`);
    assert.deepEqual(await names(), ['added', 'echo', 'other']);
  });

  test('a failed health test (error), then the instance deleted', async () => {
    const down = await startLegacyMcpServer({ tools: [{ name: 'gone_soon', inputSchema: { type: 'object' } }] });
    const second = await addInstance(t, user, down.url, { displayName: 'Down', toolPrefix: 'd_' });
    assert.deepEqual(await names(), ['added', 'd_gone_soon', 'echo', 'other']);
    await down.close();
    await t.inject({ method: 'POST', url: `${C}/instances/${second.id}/test`, headers: user.headers });
    assert.deepEqual(await names(), ['added', 'echo', 'other']);
    await api('DELETE', `/instances/${instance.id}`);
    assert.deepEqual(await names(), []);
    assert.match((await call('echo')).error!.message, /Unknown tool: echo/);
  });
});

describe('outside the connectors API', () => {
  test("a deleted workspace's catalog goes with it", async () => {
    const owner = await mcpUser(t);
    const accountUrl = `/api/v1/accounts/${owner.account.id}/workspaces`;
    const created = await t.inject({
      method: 'POST',
      url: accountUrl,
      headers: owner.headers,
      payload: { name: 'Side' },
    });
    assert.equal(created.statusCode, 201, created.payload);
    const workspaceId = JSON.parse(created.payload).data.id as string;
    const inWs = { ...owner.headers, 'x-workspace-id': workspaceId };
    const up = await startLegacyMcpServer({ tools: [{ name: 'side', inputSchema: { type: 'object' } }] });
    try {
      const json = async (method: string, url: string, payload?: object) => {
        const res = await t.inject({ method, url: `${C}${url}`, headers: inWs, payload });
        assert.ok(res.statusCode < 300, res.payload);
        return JSON.parse(res.payload).data;
      };
      const inst = await json('POST', '/instances', {
        connectorKey: 'mcp-generic',
        displayName: 'Side',
        config: { url: up.url },
      });
      await json('POST', `/instances/${inst.id}/sync-tools`);
      await json('POST', `/instances/${inst.id}/test`);
      const principal = { userId: owner.user.id, kind: 'session' as const, scopes: null, clientId: null };
      const ws = await t.app.services.accounts.access.workspace(
        { ...principal, sessionId: null, accountId: null, tokenId: null },
        { workspaceId },
      );
      const { listExposed } = t.app.services.connectors.tools;
      assert.deepEqual(
        (await listExposed(ws)).map((x) => x.name),
        ['side__side'],
      );
      const deleted = await t.inject({ method: 'DELETE', url: `${accountUrl}/${workspaceId}`, headers: owner.headers });
      assert.equal(deleted.statusCode, 200, deleted.payload);
      assert.deepEqual(await listExposed(ws), []);
    } finally {
      await up.close();
    }
  });

  test('a system definition defined by the operator rebuilds every catalog', async () => {
    const keys: Array<string | null> = [];
    const stop = t.app.kernel.changes.subscribe(TOOLS_CHANGED_TOPIC, (key) => keys.push(key));
    await t.app.services.connectors.defineSystem({
      key: 'acme-sso',
      name: 'Acme',
      authorizeUrl: 'https://acme.example/authorize',
      tokenUrl: 'https://acme.example/token',
      clientId: 'gantry',
      clientSecret: 'secret',
      scopes: [],
      pkce: true,
    });
    stop();
    assert.deepEqual(keys, [null]);
  });
});

describe('a change made by another process', () => {
  let other: AppContext;
  let up: McpFake;
  before(async () => {
    // The feed watched with a tick far away: only the catch-up before each read can see the change.
    await t.app.kernel.changes.start(60_000);
    const env = await testEnvFor(t.dataDir, { ...TEST_ENV, ...ENV });
    other = await createAppContext(resolveConfig({ dataDir: t.dataDir }, env), {
      logger: createLogger('silent'),
      env,
    });
    up = await startLegacyMcpServer({ tools: [{ name: 'far', inputSchema: { type: 'object' } }] });
  });
  after(async () => {
    await other.kernel.close();
    await up.close();
  });

  test('shows in the next list and call', async () => {
    const inst = await addInstance(t, user, up.url, { displayName: 'Far', toolPrefix: '' });
    assert.deepEqual(await names(), ['far']);
    const principal = {
      userId: user.user.id,
      kind: 'session' as const,
      scopes: null,
      clientId: null,
      sessionId: null,
      accountId: null,
      tokenId: null,
    };
    const ws = await other.services.accounts.access.workspace(principal, {});
    await other.services.connectors.tools.update({ principal, ws }, inst.id, inst.toolId('far'), { enabled: false });
    assert.deepEqual(await names(), []);
    assert.match((await call('far')).error!.message, /Unknown tool: far/);
    await other.services.connectors.tools.update({ principal, ws }, inst.id, inst.toolId('far'), { enabled: true });
    assert.deepEqual(await names(), ['far']);
    assert.equal((await call('far')).result!.isError, undefined);
  });
});
