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
