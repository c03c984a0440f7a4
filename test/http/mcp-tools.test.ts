import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { addInstance, endpointOf, legacyClient, mcpUser, modernClient, type McpUser } from '../helpers/mcp-gateway.js';

// Tools through the MCP endpoint: listing, the invoke path's rules, approvals, audit (docs/mcp.md, Tools and calls).
let t: TestApp;
let upstream: McpFake;
let many: McpFake;
let user: McpUser;
let instance: Awaited<ReturnType<typeof addInstance>>;

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0].text;

before(async () => {
  t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  await t.server.start();
  upstream = await startLegacyMcpServer({
    tools: [
      {
        name: 'echo',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      { name: 'limited', inputSchema: { type: 'object' } },
      { name: 'gated', inputSchema: { type: 'object' } },
    ],
  });
  many = await startLegacyMcpServer({
    tools: Array.from({ length: 130 }, (_, i) => ({
      name: `t${String(i).padStart(3, '0')}`,
      inputSchema: { type: 'object' },
    })),
  });
  user = await mcpUser(t);
  instance = await addInstance(t, user, upstream.url, { displayName: 'Fake', toolPrefix: '' });
});
after(async () => {
  await upstream.close();
  await many.close();
  await t.close();
});

async function auditRows() {
  const log = await t.app.services.audit.log(user.account.id, { limit: 100 });
  return log.items.filter((row) => row.action === 'mcp.tool_called');
}

describe('tools/list', () => {
  test('pages of 100 in name order, the cursor carrying on; the same in both eras', async () => {
    const owner = await mcpUser(t);
    await addInstance(t, owner, many.url, { displayName: 'Many', toolPrefix: '' });
    const expected = Array.from({ length: 130 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    const legacy = await legacyClient(endpointOf(t), owner.token);
    const first = await legacy.listTools();
    assert.equal(first.tools.length, 100);
    assert.ok(first.nextCursor);
    const second = await legacy.listTools({ cursor: first.nextCursor });
    assert.equal(second.nextCursor, undefined);
    assert.deepEqual(
      [...first.tools, ...second.tools].map((x) => x.name),
      expected,
    );
    await assert.rejects(legacy.listTools({ cursor: 'forged.cursor' }), /cursor/i);
    await legacy.close();
    // The 2.x client follows nextCursor itself, page by page; a raw request shows the first page.
    const modern = await modernClient(endpointOf(t), owner.token);
    assert.deepEqual(
      (await modern.listTools()).tools.map((x) => x.name),
      expected,
    );
    const page = (await modern.request({ method: 'tools/list', params: {} })) as {
      tools: unknown[];
      nextCursor?: string;
    };
    assert.equal(page.tools.length, 100);
    assert.ok(page.nextCursor);
    await modern.close();
  });
});

describe('tools/call', () => {
  test('invalid arguments are an isError result the model can read; the upstream is not called', async () => {
    const client = await modernClient(endpointOf(t), user.token);
    const before = upstream.calls.length;
    const result = await client.callTool({ name: 'echo', arguments: { text: 42 } });
    assert.equal(result.isError, true);
    assert.match(text(result), /^Invalid arguments: /);
    assert.equal(upstream.calls.length, before);
    await client.close();
  });

  test("the tool's rateLimitRpm: an isError result with the retry time", async () => {
    await instance.patchTool('limited', { rateLimitRpm: 1 });
    const client = await legacyClient(endpointOf(t), user.token);
    assert.equal((await client.callTool({ name: 'limited', arguments: {} })).isError, undefined);
    const refused = await client.callTool({ name: 'limited', arguments: {} });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /allows 1 calls per minute\. Retry after \d+ seconds\./);
    assert.ok((refused._meta as Record<string, number>)['io.gantry/retryAfterSeconds'] > 0);
    await client.close();
  });

  test('an approval-gated call waits for an owner or admin; the identical retry then runs once', async () => {
    await instance.patchTool('gated', { requiresApproval: true });
    const client = await modernClient(endpointOf(t), user.token);
    const before = upstream.calls.length;
    const first = await client.callTool({ name: 'gated', arguments: { x: 1 } });
    assert.equal(first.isError, true);
    const approval = (first._meta as Record<string, { id: string; status: string; url: string }>)['io.gantry/approval'];
    assert.equal(approval.status, 'pending');
    assert.equal(approval.url, `${t.app.kernel.config.publicUrl}/approvals/${approval.id}`);
    assert.match(text(first), /retry with exactly the same arguments/);
    assert.ok(text(first).includes(approval.url));
    assert.equal(upstream.calls.length, before, 'nothing ran');
    // The same call while pending: the same approval, still nothing run.
    const again = await client.callTool({ name: 'gated', arguments: { x: 1 } });
    assert.equal((again._meta as Record<string, { id: string }>)['io.gantry/approval'].id, approval.id);
    assert.equal(upstream.calls.length, before);
    const decided = await t.inject({
      method: 'POST',
      url: `/api/v1/connectors/approvals/${approval.id}/approve`,
      headers: user.headers,
    });
    assert.equal(decided.statusCode, 200, decided.payload);
    assert.equal(upstream.calls.length, before, 'approving runs nothing');
    // Other arguments are another call: not covered by the approval.
    const other = await client.callTool({ name: 'gated', arguments: { x: 2 } });
    assert.equal(other.isError, true);
    assert.notEqual((other._meta as Record<string, { id: string }>)['io.gantry/approval'].id, approval.id);
    const retry = await client.callTool({ name: 'gated', arguments: { x: 1 } });
    assert.notEqual(retry.isError, true, text(retry));
    assert.equal(upstream.calls.length, before + 1, 'the retry ran once');
    const third = await client.callTool({ name: 'gated', arguments: { x: 1 } });
    assert.equal(third.isError, true);
    const renewed = (third._meta as Record<string, { id: string; status: string }>)['io.gantry/approval'];
    assert.equal(renewed.status, 'pending');
    assert.notEqual(renewed.id, approval.id, 'a used approval is not used again');
    assert.equal(upstream.calls.length, before + 1);
    await client.close();
  });

  test('an audit row per call: user, client, tool, a digest of the canonical arguments, outcome, latency', async () => {
    const client = await modernClient(endpointOf(t), user.token);
    await client.callTool({ name: 'echo', arguments: { text: 'audited' } });
    await client.close();
    const row = (await auditRows()).find((r) => r.metadata.outcome === 'completed' && r.metadata.tool === 'echo')!;
    assert.ok(row, 'an mcp.tool_called row');
    assert.equal(row.actorId, user.user.id);
    assert.equal(row.targetId, instance.toolId('echo'));
    const digest = createHash('sha256').update('{"text":"audited"}').digest('hex');
    assert.deepEqual(
      { ...row.metadata, latencyMs: typeof row.metadata.latencyMs },
      {
        workspaceId: user.defaultWorkspace,
        instanceId: instance.id,
        tool: 'echo',
        clientId: user.client.clientId,
        argumentsSha256: digest,
        outcome: 'completed',
        latencyMs: 'number',
      },
    );
    const outcomes = new Set((await auditRows()).map((r) => r.metadata.outcome));
    for (const outcome of ['invalid_arguments', 'rate_limited', 'pending_approval'])
      assert.ok(outcomes.has(outcome), outcome);
    assert.ok(!JSON.stringify(await auditRows()).includes('audited'), 'arguments are never stored');
  });

  test('gantry_mcp_tool_calls_total counts every call by the outcome its audit row records', async () => {
    const counts: Record<string, number> = {};
    for (const row of await auditRows()) {
      const outcome = row.metadata.outcome as string;
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    }
    const metric = await t.app.kernel.metrics.registry.getSingleMetric('gantry_mcp_tool_calls_total')?.get();
    const counted = Object.fromEntries((metric?.values ?? []).map((v) => [v.labels.outcome, v.value]));
    assert.ok((counts.completed ?? 0) > 0 && (counts.rate_limited ?? 0) > 0);
    assert.deepEqual(counted, counts);
    // The same calls on the connectors' invoke path, which names a refusal by its error code.
    const invoked = await t.app.kernel.metrics.registry
      .getSingleMetric('gantry_connector_tool_invocations_total')
      ?.get();
    const byOutcome = Object.fromEntries((invoked?.values ?? []).map((v) => [v.labels.outcome, v.value]));
    assert.equal(byOutcome.completed, counts.completed + (counts.tool_error ?? 0));
    assert.equal(byOutcome.rate_limit_exceeded, counts.rate_limited);
  });

  test('an unknown tool is a JSON-RPC invalid params error', async () => {
    const client = await legacyClient(endpointOf(t), user.token);
    await assert.rejects(
      client.callTool({ name: 'nope', arguments: {} }),
      (err: { code?: number }) => err.code === -32602,
    );
    await client.close();
  });
});
