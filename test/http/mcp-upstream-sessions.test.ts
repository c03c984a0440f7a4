import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startLegacyMcpServer, startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { addInstance, endpointOf, legacyClient, mcpUser, statelessRpc, type McpUser } from '../helpers/mcp-gateway.js';

// Upstream sessions of tool calls (docs/mcp.md, Performance): calls that lend nothing
// session-wide share the instance's session, which is renewed when its target or the
// workspace's tools change; the target's era is remembered, so calls do not probe it again.
const C = '/api/v1/connectors';

let t: TestApp;
let legacy: McpFake;
let modern: McpFake;
let user: McpUser;
let legacyInstance: Awaited<ReturnType<typeof addInstance>>;

before(async () => {
  t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  await t.server.start();
  const tools = [{ name: 'echo', inputSchema: { type: 'object' } }];
  legacy = await startLegacyMcpServer({ tools });
  modern = await startModernMcpServer({ tools: [{ name: 'hello', inputSchema: { type: 'object' } }] });
  user = await mcpUser(t);
  legacyInstance = await addInstance(t, user, legacy.url, { displayName: 'Old', toolPrefix: 'old_' });
  await addInstance(t, user, modern.url, { displayName: 'New', toolPrefix: 'new_' });
});
after(async () => {
  await legacy.close();
  await modern.close();
  await t.close();
});

/** A stateless (2026-07-28) tools/call through the endpoint; extra _meta (a log level) optional. */
async function call(name: string, meta: Record<string, unknown> = {}) {
  const res = await statelessRpc(t, user.token, 'tools/call', { name, arguments: {} }, { name, meta });
  assert.equal(res.statusCode, 200, res.payload);
  // A log level asks for an event stream: the result is its last message.
  const body = res.payload.startsWith('{')
    ? res.payload
    : res.payload
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .at(-1)!
        .slice(6);
  const result = JSON.parse(body).result as { isError?: boolean };
  assert.ok(result && result.isError === undefined, body);
  return result;
}
const count = (fake: McpFake, method: string | null) => fake.requests.filter((r) => r.method === method).length;

describe('a 2025-era upstream', () => {
  test('calls without log messages share one session, which opens no event stream', async () => {
    const initialized = count(legacy, 'initialize');
    const gets = count(legacy, null);
    const ran = legacy.calls.length;
    await call('old_echo');
    await Promise.all(Array.from({ length: 5 }, () => call('old_echo')));
    // The REST invoke path lends no relay: the same session.
    const invoked = await t.inject({
      method: 'POST',
      url: `${C}/instances/${legacyInstance.id}/tools/${legacyInstance.toolId('echo')}/invoke`,
      headers: user.headers,
      payload: { input: {} },
    });
    assert.equal(invoked.statusCode, 200, invoked.payload);
    assert.equal(legacy.calls.length, ran + 7);
    assert.equal(count(legacy, 'initialize'), initialized + 1);
    assert.equal(count(legacy, null), gets, 'no GET stream');
  });

  test('a new credential opens a new session, with it', async () => {
    const initialized = count(legacy, 'initialize');
    const stored = await t.inject({
      method: 'POST',
      url: `${C}/instances/${legacyInstance.id}/credentials`,
      headers: user.headers,
      payload: { credType: 'bearer_token', credentials: { token: 'rotated-secret' } },
    });
    assert.equal(stored.statusCode, 200, stored.payload);
    await call('old_echo');
    await call('old_echo');
    assert.equal(count(legacy, 'initialize'), initialized + 1);
    assert.equal(legacy.requests.at(-1)!.headers.authorization, 'Bearer rotated-secret');
  });

  test("a change to the workspace's tools retires the session", async () => {
    await call('old_echo');
    const initialized = count(legacy, 'initialize');
    await legacyInstance.patchTool('echo', { rateLimitRpm: 100 });
    await call('old_echo');
    assert.equal(count(legacy, 'initialize'), initialized + 1);
  });

  test('a session the upstream dropped: the call runs once, on a new session', async () => {
    await call('old_echo');
    const ran = legacy.calls.length;
    const initialized = count(legacy, 'initialize');
    legacy.dropSessions!();
    await call('old_echo');
    assert.equal(legacy.calls.length, ran + 1);
    assert.equal(count(legacy, 'initialize'), initialized + 1);
    await call('old_echo');
    assert.equal(count(legacy, 'initialize'), initialized + 1, 'and shares that one');
  });

  test('a caller that takes log messages gets a session of its own per call', async () => {
    const initialized = count(legacy, 'initialize');
    const client = await legacyClient(endpointOf(t), user.token);
    await client.callTool({ name: 'old_echo', arguments: {} });
    await client.callTool({ name: 'old_echo', arguments: {} });
    await client.close();
    assert.equal(count(legacy, 'initialize'), initialized + 2);
  });
});

describe('a 2026-07-28 upstream', () => {
  test('is probed by the first call only; later calls, shared or not, connect with no round trip', async () => {
    await call('new_hello');
    const probes = count(modern, 'server/discover');
    const ran = modern.calls.length;
    await call('new_hello');
    await Promise.all(Array.from({ length: 3 }, () => call('new_hello')));
    // A log level asks for log messages: a session of its own, still without a probe.
    await call('new_hello', { 'io.modelcontextprotocol/logLevel': 'debug' });
    assert.equal(modern.calls.length, ran + 5);
    assert.equal(count(modern, 'server/discover'), probes);
    assert.equal(modern.requests.length, modern.calls.length + probes + count(modern, 'tools/list'));
  });
});
