import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { sealUnderLostKey } from '../helpers/factories.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { startProtectedMcp, type ProtectedMcp } from '../helpers/mcp-protected.js';
import { addInstance, endpointOf, legacyClient, mcpUser, modernClient, type McpUser } from '../helpers/mcp-gateway.js';
import { linkCookieOf } from '../helpers/connector-links.js';

const C = '/api/v1/connectors';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }> };

/**
 * docs/mcp.md, Calls: a tools/call whose credential is sealed with a key this node lacks (a
 * rotation it did not hear of, docs/postgres.md, Secrets) is an `isError` result naming the key
 * for the operator, audited as `not_configured`; never a protocol error, nothing sent upstream,
 * the key reported once in the log.
 */
describe('MCP tools/call on a node without the credential key', () => {
  let t: TestApp;
  let upstream: McpFake;
  let protectedMcp: ProtectedMcp;
  let user: McpUser;
  const lostKey = randomBytes(32);
  /** Runs `seal` with the key `x9` active, as a node that has it; afterwards this node lacks it. */
  const underLostKey = (seal: () => Promise<unknown>) => sealUnderLostKey(t.app, 'x9', lostKey, seal);

  const auditOutcomes = async (tool: string) => {
    const log = await t.app.services.audit.log(user.account.id, { limit: 100 });
    return log.items
      .filter((row) => row.action === 'mcp.tool_called' && row.metadata.tool === tool)
      .map((row) => row.metadata.outcome);
  };
  const counted = async (outcome: string, name = 'gantry_mcp_tool_calls_total') => {
    const metric = await t.app.kernel.metrics.registry.getSingleMetric(name)?.get();
    return metric?.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  };
  const reports = () => t.logs.filter((line) => line.includes('credential key missing'));

  const assertNotConfigured = (result: ToolResult) => {
    assert.equal(result.isError, true, JSON.stringify(result));
    const text = result.content[0].text;
    assert.match(text, /could not run: this server is missing a credential key that an operator must provide/);
    assert.match(text, /Credential key "x9" is not in this server's keyring/);
    assert.equal(text.includes(lostKey.toString('base64')), false);
    assert.equal(text.includes(lostKey.toString('base64url')), false);
  };

  before(async () => {
    t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    await t.server.start();
    upstream = await startLegacyMcpServer({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
    protectedMcp = await startProtectedMcp([{ name: 'whoami', inputSchema: { type: 'object' } }]);
    user = await mcpUser(t);
  });
  after(async () => {
    await t?.close();
    await upstream?.close();
    await protectedMcp?.close();
  });

  it('a shared credential: an isError result in both eras, audited and counted, logged once', async () => {
    const instance = await addInstance(t, user, upstream.url, { displayName: 'Fake', toolPrefix: '' });
    await underLostKey(async () => {
      const set = await t.inject({
        method: 'POST',
        url: `${C}/instances/${instance.id}/credentials`,
        headers: user.headers,
        payload: { credType: 'bearer_token', credentials: { token: 'tkn-lost' } },
      });
      assert.ok(set.statusCode < 300, set.payload);
    });
    const calls = upstream.calls.length;
    const before = await counted('not_configured');
    const invokedBefore = await counted('not_configured', 'gantry_connector_tool_invocations_total');

    const legacy = await legacyClient(endpointOf(t), user.token);
    const modern = await modernClient(endpointOf(t), user.token);
    try {
      assertNotConfigured((await legacy.callTool({ name: 'echo', arguments: {} })) as ToolResult);
      assertNotConfigured((await modern.callTool({ name: 'echo', arguments: {} })) as ToolResult);
    } finally {
      await legacy.close();
      await modern.close();
    }

    assert.equal(upstream.calls.length, calls, 'nothing reached the upstream');
    assert.deepEqual(await auditOutcomes('echo'), ['not_configured', 'not_configured']);
    assert.equal((await counted('not_configured')) - before, 2);
    assert.equal((await counted('not_configured', 'gantry_connector_tool_invocations_total')) - invokedBefore, 2);
    const lines = reports();
    assert.equal(lines.length, 1, lines.join('\n'));
    const report = JSON.parse(lines[0]) as { level: string; keyId: string; action: string };
    assert.equal(report.level, 'error');
    assert.equal(report.keyId, 'x9');
    assert.match(report.action, /GANTRY_SECRET_CREDENTIAL_KEY/);
    // Not a failure of the code: no 500 logged, no key material anywhere in the log.
    assert.equal(t.logs.filter((line) => line.includes('request failed')).length, 0);
    const text = t.logs.join('\n');
    assert.equal(text.includes(lostKey.toString('base64')), false);
    assert.equal(text.includes('tkn-lost'), false);
  });

  it("a per_user instance relaying to its server: the caller's own link under the lost key, the same answer", async () => {
    const create = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: user.headers,
      payload: {
        connectorKey: 'mcp-generic',
        displayName: 'Remote',
        config: { url: protectedMcp.url },
        toolPrefix: '',
        credentialMode: 'per_user',
      },
    });
    assert.equal(create.statusCode, 201, create.payload);
    const id = (create.result as { data: { id: string } }).data.id;
    /** Initiate, follow the authorization URL as a browser, then Gantry's callback. */
    const link = async () => {
      const started = await t.inject({
        method: 'POST',
        url: `${C}/instances/${id}/oauth/initiate`,
        headers: user.headers,
      });
      assert.equal(started.statusCode, 200, started.payload);
      const answer = await fetch((started.result as { data: { redirectUrl: string } }).data.redirectUrl, {
        redirect: 'manual',
      });
      const back = new URL(String(answer.headers.get('location')));
      const res = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
      assert.equal(new URL(String(res.headers.location)).searchParams.get('status'), 'success');
    };
    await link();
    const synced = await t.inject({ method: 'POST', url: `${C}/instances/${id}/sync-tools`, headers: user.headers });
    assert.equal(synced.statusCode, 200, synced.payload);
    // Linked again by a node that had `x9`: the caller's token is now sealed with it.
    await underLostKey(link);
    const calls = protectedMcp.toolCalls.length;

    const legacy = await legacyClient(endpointOf(t), user.token);
    try {
      for (let i = 0; i < 2; i++)
        assertNotConfigured((await legacy.callTool({ name: 'whoami', arguments: {} })) as ToolResult);
    } finally {
      await legacy.close();
    }

    assert.equal(protectedMcp.toolCalls.length, calls, 'nothing reached the upstream');
    assert.deepEqual(await auditOutcomes('whoami'), ['not_configured', 'not_configured']);
    // Still the one report of the first case: once per key for the process.
    assert.equal(reports().length, 1);
  });
});
