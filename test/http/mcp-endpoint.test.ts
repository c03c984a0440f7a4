import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { addInstance, endpointOf, legacyClient, mcpUser, modernClient, type McpUser } from '../helpers/mcp-gateway.js';

// The MCP endpoint with the official clients of both eras on a real listener (docs/mcp.md).
let t: TestApp;
let upstream: McpFake;
let user: McpUser;
let instance: Awaited<ReturnType<typeof addInstance>>;

async function waitFor(condition: () => boolean) {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(condition(), 'waited 2 s');
}

before(async () => {
  t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  await t.server.start();
  upstream = await startLegacyMcpServer({
    tools: [
      {
        name: 'echo',
        description: 'Echoes',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      { name: 'add', inputSchema: { type: 'object' } },
    ],
  });
  user = await mcpUser(t);
  instance = await addInstance(t, user, upstream.url, { displayName: 'Fake', toolPrefix: '' });
});
after(async () => {
  await upstream.close();
  await t.close();
});

describe('legacy clients (2025-11-25, SDK 1.x)', () => {
  test('initialize, list, call', async () => {
    const client = await legacyClient(endpointOf(t), user.token);
    const listed = await client.listTools();
    assert.deepEqual(
      listed.tools.map((x) => x.name),
      ['add', 'echo'],
    );
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    assert.equal(result.isError, undefined);
    assert.deepEqual(JSON.parse((result.content as Array<{ text: string }>)[0].text), {
      tool: 'echo',
      args: { text: 'hi' },
    });
    await client.close();
  });
});

describe('list_changed', () => {
  test('a legacy session with its GET stream hears when the workspace tools change, not on a change it cannot see', async () => {
    const client = await legacyClient(endpointOf(t), user.token);
    let heard = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      heard++;
    });
    // The 1.x transport opens its GET stream once initialized; give it a moment.
    await new Promise((r) => setTimeout(r, 200));
    await instance.patchTool('add', { rateLimitRpm: 5 });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(heard, 0, 'a setting the client does not see');
    await instance.patchTool('add', { enabled: false });
    await waitFor(() => heard === 1);
    assert.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['echo'],
    );
    await instance.patchTool('add', { enabled: true });
    await waitFor(() => heard === 2);
    await client.close();
  });
});

describe('modern clients (2026-07-28, SDK 2.x)', () => {
  test('discover, list, call', async () => {
    const client = await modernClient(endpointOf(t), user.token);
    const listed = await client.listTools();
    assert.deepEqual(
      listed.tools.map((x) => x.name),
      ['add', 'echo'],
    );
    const result = await client.callTool({ name: 'echo', arguments: { text: 'yo' } });
    assert.deepEqual(JSON.parse((result.content as Array<{ text: string }>)[0].text), {
      tool: 'echo',
      args: { text: 'yo' },
    });
    await client.close();
  });
});

describe('list_changed, 2026-07-28 (subscriptions/listen)', () => {
  test('a modern listen hears when its workspace tools change, not on a change it cannot see or of another workspace', async () => {
    const client = await modernClient(endpointOf(t), user.token);
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true);
    let heard = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      heard++;
    });
    const sub = await client.listen({ toolsListChanged: true });
    assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
    await instance.patchTool('add', { rateLimitRpm: 7 });
    // Another user's workspace changing its list.
    const other = await mcpUser(t);
    const otherUpstream = await startLegacyMcpServer({ tools: [{ name: 'solo', inputSchema: { type: 'object' } }] });
    const otherInstance = await addInstance(t, other, otherUpstream.url, { displayName: 'Other', toolPrefix: '' });
    await otherInstance.patchTool('solo', { enabled: false });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(heard, 0, 'a setting the client does not see, or another workspace');
    await instance.patchTool('add', { enabled: false });
    await waitFor(() => heard === 1);
    assert.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['echo'],
    );
    await instance.patchTool('add', { enabled: true });
    await waitFor(() => heard === 2);
    await sub.close();
    assert.equal(await sub.closed, 'local');
    await instance.patchTool('add', { enabled: false });
    await instance.patchTool('add', { enabled: true });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(heard, 2, 'nothing after the listen is closed');
    await client.close();
    await otherUpstream.close();
  });

  test('a user keeps at most 8 listens open', async () => {
    const listener = await mcpUser(t);
    const client = await modernClient(endpointOf(t), listener.token);
    const subs = [];
    for (let i = 0; i < 8; i++) subs.push(await client.listen({ toolsListChanged: true }));
    await assert.rejects(client.listen({ toolsListChanged: true }), /Subscription limit reached/);
    // Another user is not held back by this one's listens.
    const second = await modernClient(endpointOf(t), user.token);
    const theirs = await second.listen({ toolsListChanged: true });
    await theirs.close();
    await subs[0].close();
    assert.equal(await subs[0].closed, 'local');
    // The closed one's place is free again (the server sees the stream end).
    let again;
    for (let i = 0; i < 50 && !again; i++) {
      again = await client.listen({ toolsListChanged: true }).catch(() => undefined);
      if (!again) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(again, 'a listen after one was closed');
    for (const sub of [...subs.slice(1), again]) await sub.close();
    await client.close();
    await second.close();
  });

  test('listens end when the server stops', async () => {
    const app = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    await app.server.start();
    const someone = await mcpUser(app);
    const client = await modernClient(endpointOf(app), someone.token);
    const sub = await client.listen({ toolsListChanged: true });
    await app.close();
    assert.equal(await sub.closed, 'graceful');
    await client.close();
  });
});
