import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addInstance, mcpUser, statelessRpc, type McpUser } from '../helpers/mcp-gateway.js';
import { startLegacyMcpServer, startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { type CollectedSpan, type OtlpCollector, startOtlpCollector, tracingEnv } from '../helpers/otlp-collector.js';

// The MCP endpoint's span per JSON-RPC request (src/mcp/spans.ts; docs/operations.md, Traces),
// the same whichever path answers (the direct one, src/mcp/direct.ts, or the SDK's), and the
// agent's trace carried to the upstream through the direct upstream call (mcp-calls.ts).

const AGENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const AGENT_SPAN = '00f067aa0ba902b7';
const AGENT = `00-${AGENT_TRACE}-${AGENT_SPAN}-01`;

const TOOLS = [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }];

async function exported(t: TestApp, collector: OtlpCollector, traceId: string): Promise<CollectedSpan[]> {
  await new Promise((resolve) => setImmediate(resolve));
  await t.app.kernel.tracing.flush();
  return collector.spans.filter((s) => s.traceId === traceId);
}

const one = (spans: CollectedSpan[], name: string, kind: CollectedSpan['kind']) => {
  const found = spans.filter((s) => s.name === name && s.kind === kind);
  assert.equal(found.length, 1, `one ${kind} span ${name} in ${spans.map((s) => `${s.kind} ${s.name}`).join(', ')}`);
  return found[0];
};

async function served(t: TestApp, era: string, path: string): Promise<number> {
  const metric = await t.app.kernel.metrics.registry.getSingleMetric('gantry_mcp_requests_total')?.get();
  return metric?.values.find((v) => v.labels.era === era && v.labels.path === path)?.value ?? 0;
}

/** The `_meta` of the upstream's last tools/call, and its traceparent header. */
function upstreamCall(upstream: McpFake, seen: number) {
  const call = upstream.requests.slice(seen).find((r) => r.method === 'tools/call');
  assert.ok(call, 'the upstream was called');
  const meta = (call.body?.params as { _meta?: Record<string, unknown> })._meta ?? {};
  return { header: call.headers.traceparent, meta: meta.traceparent, sessionId: call.headers['mcp-session-id'] };
}

/**
 * The spans of one tools/call echo in `traceId`: the MCP server span under `parent`, the tool
 * execution under it, the upstream client span under that, and what the upstream received.
 */
function assertCallTrace(spans: CollectedSpan[], upstream: McpFake, seen: number, parent: string) {
  const server = one(spans, 'tools/call echo', 'server');
  assert.equal(server.parentSpanId, parent);
  assert.equal(server.attributes['mcp.method.name'], 'tools/call');
  assert.equal(server.attributes['gen_ai.tool.name'], 'echo');
  assert.equal(server.attributes['gen_ai.operation.name'], 'execute_tool');
  assert.equal(server.statusCode, 0);
  const execute = one(spans, 'execute_tool echo', 'internal');
  assert.equal(execute.parentSpanId, server.spanId);
  const client = one(spans, 'tools/call echo', 'client');
  assert.equal(client.parentSpanId, execute.spanId);
  assert.ok(server.startNs <= execute.startNs && execute.endNs <= server.endNs, 'the request span covers the call');
  const received = upstreamCall(upstream, seen);
  assert.equal(received.header, `00-${AGENT_TRACE}-${client.spanId}-01`, 'the agent trace, in the HTTP headers');
  assert.equal(received.meta, received.header, 'and in params._meta');
  return { server, client, received };
}

for (const upstreamEra of ['2025-11-25', '2026-07-28'] as const) {
  describe(`the MCP request span, to a ${upstreamEra} upstream (docs/operations.md, Traces)`, () => {
    let collector: OtlpCollector;
    let t: TestApp;
    let upstream: McpFake;
    let user: McpUser;
    before(async () => {
      collector = await startOtlpCollector();
      t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', ...tracingEnv(collector) } });
      upstream = await (upstreamEra === '2025-11-25' ? startLegacyMcpServer : startModernMcpServer)({ tools: TOOLS });
      user = await mcpUser(t);
      await addInstance(t, user, upstream.url, { displayName: 'Fake', toolPrefix: '' });
    });
    after(async () => {
      await upstream.close();
      await t.close();
      await collector.close();
    });

    it('2026-07-28, direct path: params._meta.traceparent parents the request span, linked to the HTTP span', async () => {
      const [seen, direct] = [upstream.requests.length, await served(t, 'modern', 'direct')];
      const res = await statelessRpc(
        t,
        user.token,
        'tools/call',
        { name: 'echo', arguments: { text: 'x' } },
        { name: 'echo', meta: { traceparent: AGENT, tracestate: 'agent=1' } },
      );
      assert.equal(res.statusCode, 200, res.payload);
      assert.equal(await served(t, 'modern', 'direct'), direct + 1, 'answered by the direct path');
      const spans = await exported(t, collector, AGENT_TRACE);
      const { server, client, received } = assertCallTrace(spans, upstream, seen, AGENT_SPAN);
      assert.equal(server.attributes['mcp.protocol.version'], '2026-07-28');
      assert.equal(server.attributes['jsonrpc.request.id'], '1');
      assert.equal(server.attributes['mcp.session.id'], undefined);
      // The transport's span: a trace of its own (no traceparent header), linked from the request's.
      const http = collector.spans.find((s) => s.spanId === server.links[0]?.spanId);
      assert.equal(http?.name, 'POST /api/v1/mcp');
      assert.notEqual(http.traceId, AGENT_TRACE);
      assert.equal(client.attributes['mcp.protocol.version'], upstreamEra);
      if (upstreamEra === '2025-11-25') assert.equal(client.attributes['mcp.session.id'], received.sessionId);
    });

    it('2025-11-25 session, direct path: the traceparent header parents the HTTP span, the request span under it', async () => {
      const headers = {
        authorization: `Bearer ${user.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      const init = await t.inject({
        method: 'POST',
        url: '/api/v1/mcp',
        headers,
        payload: {
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'traces', version: '1' } },
        },
      });
      assert.equal(init.statusCode, 200, init.payload);
      const session = String(init.headers['mcp-session-id']);
      const inSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
      const ack = { jsonrpc: '2.0', method: 'notifications/initialized' };
      await t.inject({ method: 'POST', url: '/api/v1/mcp', headers: inSession, payload: ack });
      const [seen, direct] = [upstream.requests.length, await served(t, 'legacy', 'direct')];
      const res = await t.inject({
        method: 'POST',
        url: '/api/v1/mcp',
        headers: { ...inSession, traceparent: AGENT },
        payload: { jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params: { name: 'echo', arguments: {} } },
      });
      assert.equal(res.statusCode, 200, res.payload);
      assert.equal(await served(t, 'legacy', 'direct'), direct + 1, 'answered by the direct path');
      const spans = await exported(t, collector, AGENT_TRACE);
      const http = spans.filter((s) => s.name === 'POST /api/v1/mcp').at(-1)!;
      assert.equal(http.parentSpanId, AGENT_SPAN);
      const { server } = assertCallTrace(
        spans.filter((s) => s.startNs >= http.startNs),
        upstream,
        seen,
        http.spanId,
      );
      assert.deepEqual(server.links, [], 'no other context to link');
      assert.equal(server.attributes['mcp.session.id'], session);
      assert.equal(server.attributes['mcp.protocol.version'], '2025-11-25');
      assert.equal(server.attributes['jsonrpc.request.id'], 'call-1');
    });

    it("the SDK's path makes the same spans; a JSON-RPC error marks the request span, on either path", async () => {
      const trace = (n: string) => `00-${n.repeat(32)}-${AGENT_SPAN}-01`;
      const sdk = await served(t, 'modern', 'sdk');
      const seen = upstream.requests.length;
      // A progress token: the SDK's path answers (direct.ts takes none).
      const viaSdk = await statelessRpc(
        t,
        user.token,
        'tools/call',
        { name: 'echo', arguments: {} },
        { name: 'echo', meta: { traceparent: trace('1'), progressToken: 'p' } },
      );
      assert.equal(viaSdk.statusCode, 200, viaSdk.payload);
      assert.equal(await served(t, 'modern', 'sdk'), sdk + 1, 'answered by the SDK');
      const received = upstreamCall(upstream, seen);
      assert.equal(String(received.header).split('-')[1], '1'.repeat(32), 'the agent trace reaches the upstream');
      const sdkSpans = await exported(t, collector, '1'.repeat(32));
      const server = one(sdkSpans, 'tools/call echo', 'server');
      assert.equal(server.parentSpanId, AGENT_SPAN);
      assert.equal(one(sdkSpans, 'execute_tool echo', 'internal').parentSpanId, server.spanId);

      const unknown = (n: string, meta: Record<string, unknown>) =>
        statelessRpc(t, user.token, 'tools/call', { name: 'nope', arguments: {} }, { name: 'nope', meta });
      const refusedDirect = await unknown('2', { traceparent: trace('2') });
      const refusedSdk = await unknown('3', { traceparent: trace('3'), progressToken: 'q' });
      for (const [n, res] of [
        ['2', refusedDirect],
        ['3', refusedSdk],
      ] as const) {
        const body = res.payload.includes('data: ') ? res.payload.split('data: ').at(-1)! : res.payload;
        assert.equal(JSON.parse(body).error.code, -32602, res.payload);
        const span = one(await exported(t, collector, n.repeat(32)), 'tools/call nope', 'server');
        assert.equal(span.statusCode, 2);
        assert.equal(span.attributes['error.type'], '-32602');
        assert.equal(span.attributes['rpc.response.status_code'], '-32602');
        assert.deepEqual(span.events, [], 'an answer, not an exception');
      }
    });
  });
}

describe('the MCP request span: what it continues', () => {
  let collector: OtlpCollector;
  let t: TestApp;
  let user: McpUser;
  before(async () => {
    collector = await startOtlpCollector();
    t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', ...tracingEnv(collector) } });
    user = await mcpUser(t);
  });
  after(async () => {
    await t.close();
    await collector.close();
  });

  it('a malformed params._meta.traceparent is ignored: the request span is the HTTP span child', async () => {
    const res = await statelessRpc(t, user.token, 'tools/list', {}, { meta: { traceparent: 'not-a-traceparent' } });
    assert.equal(res.statusCode, 200, res.payload);
    await t.app.kernel.tracing.flush();
    const list = collector.spans.filter((s) => s.name === 'tools/list').at(-1);
    assert.ok(list, collector.spans.map((s) => s.name).join(', '));
    const http = collector.spans.find((s) => s.spanId === list.parentSpanId);
    assert.equal(http?.name, 'POST /api/v1/mcp');
    assert.equal(list.kind, 'server');
    assert.deepEqual(list.links, []);
    assert.equal(list.attributes['gen_ai.operation.name'], undefined, 'execute_tool is for tools/call alone');
  });
});
