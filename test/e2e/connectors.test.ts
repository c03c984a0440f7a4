import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';
import { TEST_ENV } from '../helpers/app.js';
import { testEnvFor } from '../helpers/postgres.js';
import { resolveConfig } from '../../src/config.js';
import { createAppContext, type AppContext } from '../../src/app.js';
import { createLogger } from '../../src/lib/logger.js';
import { makeTeam } from '../helpers/factories.js';
import { startLegacyMcpServer, startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';

describe('the built binary with connectors', () => {
  let g: RunningGantry;
  let side: AppContext;
  let legacy: McpFake;
  let modern: McpFake;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-e2e-conn-'));
  const env = { ...TEST_ENV, GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' };
  before(async () => {
    g = await spawnGantry({ dataDir, env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    // Another process on the same data dir (like the CLI) sets up a team and signs it in.
    const sideEnv = await testEnvFor(dataDir, { ...env, GANTRY_PUBLIC_URL: g.url });
    side = await createAppContext(resolveConfig({ dataDir }, sideEnv), {
      logger: createLogger('silent'),
      env: sideEnv,
    });
    legacy = await startLegacyMcpServer({
      tools: [
        { name: 'a', inputSchema: { type: 'object' } },
        { name: 'b', inputSchema: { type: 'object' } },
      ],
      pageSize: 1,
    });
    modern = await startModernMcpServer({
      tools: [
        { name: 'c', inputSchema: { type: 'object' } },
        { name: 'd', inputSchema: { type: 'object' } },
      ],
      pageSize: 1,
    });
  });
  after(async () => {
    await g.stop();
    await side.kernel.close();
    await legacy.close();
    await modern.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('syncs and calls tools of MCP servers of both protocol eras through the bundle', async () => {
    const { owner } = await makeTeam(side);
    const headers = { ...owner.headers, 'content-type': 'application/json' };
    for (const [fake, keys] of [
      [legacy, ['a', 'b']],
      [modern, ['c', 'd']],
    ] as const) {
      const created = await fetch(`${g.url}/api/v1/connectors/instances`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ connectorKey: 'mcp-generic', displayName: 'e2e', config: { url: fake.url } }),
      });
      assert.equal(created.status, 201);
      const { data: inst } = (await created.json()) as { data: { id: string } };
      const synced = await fetch(`${g.url}/api/v1/connectors/instances/${inst.id}/sync-tools`, {
        method: 'POST',
        headers: owner.headers,
      });
      const body = (await synced.json()) as { data: Array<{ id: string; toolKey: string }> };
      assert.equal(synced.status, 200, JSON.stringify(body));
      assert.deepEqual(
        body.data.map((t) => t.toolKey),
        keys,
      );
      const call = await fetch(`${g.url}/api/v1/connectors/instances/${inst.id}/tools/${body.data[0].id}/invoke`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ input: { x: 1 } }),
      });
      assert.equal(call.status, 200);
      assert.deepEqual(fake.calls.at(-1), { name: keys[0], args: { x: 1 } });
    }
  });

  it('keeps working across `gantry secrets rotate` run while it serves', async () => {
    const { owner } = await makeTeam(side);
    const headers = { ...owner.headers, 'content-type': 'application/json' };
    const { data: inst } = (await (
      await fetch(`${g.url}/api/v1/connectors/instances`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ connectorKey: 'mcp-generic', displayName: 'rot', config: { url: legacy.url } }),
      })
    ).json()) as { data: { id: string } };
    await fetch(`${g.url}/api/v1/connectors/instances/${inst.id}/credentials`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ credType: 'bearer_token', credentials: { token: 'e2e-bearer-before' } }),
    });
    const rotated = await g.cli(['secrets', 'rotate', '--settle-ms', '600', '--yes', '--json']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const { activeKeyId } = JSON.parse(rotated.stdout) as { activeKeyId: string };
    const row = await side.kernel.db
      .selectFrom('connector_credentials')
      .select('sealed_value')
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.sealed_value.split('.')[1], activeKeyId);
    // The server opens the re-sealed credential (it sends it to the MCP server on the test).
    const test = (await (
      await fetch(`${g.url}/api/v1/connectors/instances/${inst.id}/test`, { method: 'POST', headers: owner.headers })
    ).json()) as { data: { healthy: boolean } };
    assert.equal(test.data.healthy, true);
    assert.equal(legacy.requests.at(-1)?.headers.authorization, 'Bearer e2e-bearer-before');
    // And seals new values under the new key.
    await fetch(`${g.url}/api/v1/connectors/instances/${inst.id}/credentials`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ credType: 'bearer_token', credentials: { token: 'e2e-bearer-after' } }),
    });
    const newer = await side.kernel.db
      .selectFrom('connector_credentials')
      .select('sealed_value')
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    assert.equal(newer.sealed_value.split('.')[1], activeKeyId);
  });
});
