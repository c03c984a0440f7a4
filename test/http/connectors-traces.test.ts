import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addInstance, mcpUser, type McpUser } from '../helpers/mcp-gateway.js';
import { startLegacyMcpServer, startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { type CollectedSpan, type OtlpCollector, startOtlpCollector, tracingEnv } from '../helpers/otlp-collector.js';
import { argumentsDigest } from '../../src/lib/canonical-json.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';
/** A value no span may carry: tools' arguments reach attributes only as their digest. */
const ARGUMENT = 'argument-value-never-exported';

/** OpenTelemetry's SDK starts spans at Date.now(): their start times are whole milliseconds. */
const MS = 1_000_000n;

/** `traceparent` of a span, as W3C Trace Context writes it (sampled). */
const traceparentOf = (span: CollectedSpan) => `00-${span.traceId}-${span.spanId}-01`;

/** Spans exported so far, after the app's batch is flushed (no timers waited on). */
async function exported(t: TestApp, collector: OtlpCollector): Promise<CollectedSpan[]> {
  await new Promise((resolve) => setImmediate(resolve));
  await t.app.kernel.tracing.flush();
  return collector.spans;
}

/** Whether `span` descends from `ancestor` (the MCP endpoint may put its own span between them). */
function descends(spans: CollectedSpan[], span: CollectedSpan, ancestor: CollectedSpan): boolean {
  for (let s: CollectedSpan | undefined = span; s; s = spans.find((p) => p.spanId === s!.parentSpanId))
    if (s.parentSpanId === ancestor.spanId) return true;
  return false;
}

/** The one span of that name (of that kind: the MCP request's server span and the upstream call share a name). */
const one = (spans: CollectedSpan[], name: string, kind?: CollectedSpan['kind']) => {
  const found = spans.filter((s) => s.name === name && (!kind || s.kind === kind));
  assert.equal(found.length, 1, `one span ${name} in ${spans.map((s) => s.name).join(', ')}`);
  return found[0];
};

/** A 2026-07-28 stateless tools/call to the MCP endpoint, carrying a traceparent when given. */
function toolsCall(t: TestApp, user: McpUser, name: string, args: Record<string, unknown>, traceparent?: string) {
  return t.inject({
    method: 'POST',
    url: '/api/v1/mcp',
    headers: {
      authorization: `Bearer ${user.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
      ...(traceparent ? { traceparent } : {}),
    },
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'traces-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    },
  });
}

const TOOLS = [
  { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  { name: 'wipe', inputSchema: { type: 'object', properties: { target: { type: 'string' } } } },
];

for (const era of ['2025-11-25', '2026-07-28'] as const) {
  describe(`traces of a tool call to a ${era} upstream (docs/operations.md, Traces)`, () => {
    let collector: OtlpCollector;
    let t: TestApp;
    let upstream: McpFake;
    let user: McpUser;
    before(async () => {
      collector = await startOtlpCollector();
      t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', ...tracingEnv(collector) } });
      upstream = await (era === '2025-11-25' ? startLegacyMcpServer : startModernMcpServer)({ tools: TOOLS });
      user = await mcpUser(t);
      await addInstance(t, user, upstream.url, { displayName: 'Fake', toolPrefix: '' });
    });
    after(async () => {
      await upstream.close();
      await t.close();
      await collector.close();
    });

    it('the call continues the caller trace; the upstream gets the client span as parent, in its headers and _meta', async () => {
      const seen = upstream.requests.length;
      const res = await toolsCall(t, user, 'echo', { text: ARGUMENT }, `00-${TRACE_ID}-${PARENT_ID}-01`);
      assert.equal(res.statusCode, 200, res.payload);
      assert.equal(JSON.parse(res.payload).result.isError, undefined, res.payload);
      const spans = (await exported(t, collector)).filter((s) => s.traceId === TRACE_ID);
      const http = one(spans, 'POST /api/v1/mcp');
      assert.equal(http.parentSpanId, PARENT_ID);
      const execute = one(spans, 'execute_tool echo');
      assert.ok(descends(spans, execute, http));
      assert.equal(execute.attributes['gen_ai.operation.name'], 'execute_tool');
      assert.equal(execute.attributes['gen_ai.tool.name'], 'echo');
      assert.equal(execute.attributes['gantry.tool.outcome'], 'completed');
      assert.equal(execute.attributes['gantry.tool.arguments_digest'], argumentsDigest({ text: ARGUMENT }));
      const vault = one(spans, 'vault unseal');
      assert.equal(vault.parentSpanId, execute.spanId);
      assert.equal(vault.attributes['gantry.credential.mode'], 'shared');
      assert.match(String(vault.attributes['gantry.vault.source']), /^(cache|unsealed)$/);
      const client = one(spans, 'tools/call echo', 'client');
      assert.equal(client.kind, 'client');
      assert.equal(client.parentSpanId, execute.spanId);
      assert.ok(client.startNs + MS >= vault.endNs, 'the credential is read before the call');
      assert.deepEqual(
        {
          method: client.attributes['mcp.method.name'],
          tool: client.attributes['gen_ai.tool.name'],
          operation: client.attributes['gen_ai.operation.name'],
          version: client.attributes['mcp.protocol.version'],
          address: client.attributes['server.address'],
          port: client.attributes['server.port'],
        },
        {
          method: 'tools/call',
          tool: 'echo',
          operation: 'execute_tool',
          version: era,
          address: '127.0.0.1',
          port: Number(new URL(upstream.url).port),
        },
      );
      const call = upstream.requests.slice(seen).find((r) => r.method === 'tools/call')!;
      assert.equal(call.headers.traceparent, traceparentOf(client));
      assert.equal(
        (call.body?.params as { _meta?: Record<string, unknown> })?._meta?.traceparent,
        traceparentOf(client),
      );
      if (era === '2025-11-25') assert.equal(client.attributes['mcp.session.id'], call.headers['mcp-session-id']);
      const exportedText = JSON.stringify(collector.spans, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
      assert.ok(!exportedText.includes(ARGUMENT), 'no argument value in any span');
      assert.ok(!exportedText.includes('upstream-secret'), 'nor the credential sent upstream');
    });

    it('calls sharing one upstream session each send their own trace context', async () => {
      const seen = upstream.requests.length;
      for (const parent of ['1111111111111111', '2222222222222222'])
        assert.equal((await toolsCall(t, user, 'echo', { text: 'x' }, `00-${TRACE_ID}-${parent}-01`)).statusCode, 200);
      const calls = upstream.requests.slice(seen).filter((r) => r.method === 'tools/call');
      assert.equal(calls.length, 2);
      if (era === '2025-11-25') assert.equal(calls[0].headers['mcp-session-id'], calls[1].headers['mcp-session-id']);
      const clients = (await exported(t, collector))
        .filter((s) => s.name === 'tools/call echo' && s.kind === 'client')
        .slice(-2);
      assert.notEqual(calls[0].headers.traceparent, calls[1].headers.traceparent);
      assert.deepEqual(
        calls.map((c) => [
          c.headers.traceparent,
          (c.body?.params as { _meta?: Record<string, unknown> })?._meta?.traceparent,
        ]),
        clients.map((c) => [traceparentOf(c), traceparentOf(c)]),
      );
    });
  });
}

describe('traces of the approval gate and of a REST invocation', () => {
  let collector: OtlpCollector;
  let t: TestApp;
  let upstream: McpFake;
  let user: McpUser;
  let instance: Awaited<ReturnType<typeof addInstance>>;
  before(async () => {
    collector = await startOtlpCollector();
    t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', ...tracingEnv(collector) } });
    upstream = await startModernMcpServer({ tools: TOOLS });
    user = await mcpUser(t);
    instance = await addInstance(t, user, upstream.url, { displayName: 'Fake', toolPrefix: '' });
  });
  after(async () => {
    await upstream.close();
    await t.close();
    await collector.close();
  });

  it('a gated call: the gate says pending and nothing runs; once approved, the retry uses the approval', async () => {
    await instance.patchTool('wipe', { requiresApproval: true });
    const args = { target: ARGUMENT };
    const first = JSON.parse((await toolsCall(t, user, 'wipe', args, `00-${TRACE_ID}-${'3'.repeat(16)}-01`)).payload);
    const approval = first.result._meta['io.gantry/approval'];
    assert.equal(approval.status, 'pending');
    let spans = (await exported(t, collector)).filter((s) => s.traceId === TRACE_ID);
    const pending = one(spans, 'approval gate');
    assert.equal(pending.attributes['gantry.approval.outcome'], 'pending');
    assert.equal(pending.attributes['gantry.approval.id'], approval.id);
    assert.equal(pending.attributes['gantry.tool.arguments_digest'], argumentsDigest(args));
    assert.equal(pending.attributes['gen_ai.tool.name'], 'wipe');
    assert.ok(
      !spans.some((s) => s.name.startsWith('execute_tool') || (s.name.startsWith('tools/call') && s.kind === 'client')),
      'nothing ran',
    );

    const decided = await t.inject({
      method: 'POST',
      url: `/api/v1/connectors/approvals/${approval.id}/approve`,
      headers: user.headers,
    });
    assert.equal(decided.statusCode, 200, decided.payload);
    const retryTrace = 'a'.repeat(32);
    const retry = JSON.parse((await toolsCall(t, user, 'wipe', args, `00-${retryTrace}-${'4'.repeat(16)}-01`)).payload);
    assert.notEqual(retry.result.isError, true, JSON.stringify(retry));
    spans = (await exported(t, collector)).filter((s) => s.traceId === retryTrace);
    const approved = one(spans, 'approval gate');
    assert.equal(approved.attributes['gantry.approval.outcome'], 'approved');
    assert.equal(approved.attributes['gantry.approval.id'], approval.id);
    const execute = one(spans, 'execute_tool wipe');
    assert.ok(execute.startNs + MS >= approved.endNs, 'the gate decides before the tool runs');
    assert.deepEqual(
      execute.events.map((e) => e.name),
      ['gantry.approval.consumed'],
    );
    one(spans, 'tools/call wipe', 'client');
  });

  it('the REST invocation has the same spans under its own server span', async () => {
    const toolId = instance.toolId('echo');
    const res = await t.inject({
      method: 'POST',
      url: `/api/v1/connectors/instances/${instance.id}/tools/${toolId}/invoke`,
      headers: { ...user.headers, traceparent: `00-${'b'.repeat(32)}-${'5'.repeat(16)}-01` },
      payload: { input: { text: ARGUMENT } },
    });
    assert.equal(res.statusCode, 200, res.payload);
    const spans = (await exported(t, collector)).filter((s) => s.traceId === 'b'.repeat(32));
    const http = one(spans, 'POST /api/v1/connectors/instances/{id}/tools/{toolId}/invoke');
    const execute = one(spans, 'execute_tool echo');
    assert.equal(execute.parentSpanId, http.spanId);
    assert.equal(one(spans, 'vault unseal').parentSpanId, execute.spanId);
    assert.equal(one(spans, 'tools/call echo', 'client').parentSpanId, execute.spanId);
  });

  it('a refused call marks the tool execution span failed with the error code', async () => {
    const toolId = instance.toolId('echo');
    await instance.patchTool('echo', { rateLimitRpm: 1 });
    const invoke = (parent: string) =>
      t.inject({
        method: 'POST',
        url: `/api/v1/connectors/instances/${instance.id}/tools/${toolId}/invoke`,
        headers: { ...user.headers, traceparent: `00-${'c'.repeat(32)}-${parent}-01` },
        payload: { input: { text: 'x' } },
      });
    await invoke('6'.repeat(16));
    assert.equal((await invoke('7'.repeat(16))).statusCode, 429);
    const spans = (await exported(t, collector)).filter((s) => s.traceId === 'c'.repeat(32));
    const refused = spans.find((s) => s.name === 'execute_tool echo' && s.statusCode === 2);
    assert.ok(refused, 'a failed execute_tool span');
    assert.equal(refused.attributes['error.type'], 'RATE_LIMIT_EXCEEDED');
    assert.deepEqual(refused.events, [{ name: 'exception', attributes: { 'exception.type': 'RATE_LIMIT_EXCEEDED' } }]);
  });
});
