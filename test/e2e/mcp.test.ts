import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { addInstance, legacyClient, mcpUser, modernClient } from '../helpers/mcp-gateway.js';

// The built binary serving MCP: the bundled SDK loads on the first request, both eras work,
// revoking the grant ends access at once (docs/mcp.md).
describe('the built binary as an MCP server', () => {
  let g: RunningGantry;
  let side: TestApp;
  let upstream: McpFake;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-e2e-mcp-'));
  before(async () => {
    g = await spawnGantry({ dataDir, env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    // Another process on the same data dir runs the OAuth dance and sets up the workspace.
    side = await createTestApp({ dataDir, env: { GANTRY_PUBLIC_URL: g.url, GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    upstream = await startModernMcpServer({ tools: [{ name: 'hello', inputSchema: { type: 'object' } }] });
  });
  after(async () => {
    await g.stop();
    await side.close();
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists and calls in both eras, and a revoked grant is refused at once', async () => {
    const endpoint = `${g.url}/api/v1/mcp`;
    const user = await mcpUser(side, endpoint);
    await addInstance(side, user, upstream.url, { displayName: 'Up', toolPrefix: 'up_' });
    const legacy = await legacyClient(endpoint, user.token);
    const modern = await modernClient(endpoint, user.token);
    for (const client of [legacy, modern]) {
      assert.deepEqual(
        (await client.listTools()).tools.map((x) => x.name),
        ['up_hello'],
      );
      const result = await client.callTool({ name: 'up_hello', arguments: { n: 1 } });
      assert.equal(result.isError, undefined, JSON.stringify(result));
    }
    assert.equal(upstream.calls.length, 2);
    const revoke = await fetch(`${g.url}/api/v1/oauth/grants/${user.client.clientId}`, {
      method: 'DELETE',
      headers: user.headers,
    });
    assert.equal(revoke.status, 200, await revoke.text());
    await assert.rejects(modern.listTools(), /401|nauthorized|invalid_token/i);
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${user.token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(res.status, 401);
    await legacy.close();
    await modern.close();
  });
});
