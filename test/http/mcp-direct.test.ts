import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startConformanceUpstream, type ConformanceUpstream } from '../helpers/conformance-upstream.js';
import { addInstance, mcpUser, statelessRpc, type McpUser } from '../helpers/mcp-gateway.js';
import { startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { needsOwnSession } from '../../src/connectors/mcp.js';

// The direct path (src/mcp/direct.ts, docs/mcp.md, Performance): tools/list and tools/call that
// need nothing but their answer, answered without the SDK's per-request server, transport and
// event stream, with what the SDK's path answers; everything else still goes the SDK's way.
let t: TestApp;
let conformance: ConformanceUpstream;
let modern: McpFake;
let user: McpUser;
let other: McpUser;

const SERVER_INFO = { name: 'gantry', title: 'Gantry', version: '0.1.0' };
const ECHO = { type: 'object', properties: { text: { type: 'string' } } };

const json = (res: { payload: string }) => JSON.parse(res.payload);

async function served(era: string, path: string): Promise<number> {
  const metric = await t.app.kernel.metrics.registry.getSingleMetric('gantry_mcp_requests_total')?.get();
  return metric?.values.find((v) => v.labels.era === era && v.labels.path === path)?.value ?? 0;
}

before(async () => {
  t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  [conformance, modern] = await Promise.all([
    startConformanceUpstream(),
    startModernMcpServer({ tools: [{ name: 'echo', description: 'Echo', inputSchema: ECHO }] }),
  ]);
  user = await mcpUser(t);
  await addInstance(t, user, modern.url, { displayName: 'Modern', toolPrefix: '' });
  other = await mcpUser(t);
  await addInstance(t, other, conformance.url, { displayName: 'Conformance', toolPrefix: '' });
});
after(async () => {
  await Promise.all([conformance.close(), modern.close()]);
  await t.close();
});

describe('2026-07-28 (stateless): the direct path answers what the SDK would', () => {
  test('tools/list: one JSON answer with the revision encoding (resultType, cache fields, serverInfo)', async () => {
    const before = await served('modern', 'direct');
    const res = await statelessRpc(t, user.token, 'tools/list', {});
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(json(res), {
      jsonrpc: '2.0',
      id: 1,
      result: {
        tools: [{ name: 'echo', title: 'echo', description: 'Echo', inputSchema: ECHO }],
        resultType: 'complete',
        ttlMs: 0,
        cacheScope: 'private',
        _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
      },
    });
    assert.equal(await served('modern', 'direct'), before + 1);
  });

  test('tools/call: the upstream result as it came, resultType added, the call audited', async () => {
    const res = await statelessRpc(
      t,
      user.token,
      'tools/call',
      { name: 'echo', arguments: { text: 'hi' } },
      { name: 'echo' },
    );
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(json(res), {
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [{ type: 'text', text: JSON.stringify({ tool: 'echo', args: { text: 'hi' } }) }],
        resultType: 'complete',
        // The upstream's own identity, as the SDK's path keeps it.
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'modern-fake', version: '2.0.0' } },
      },
    });
    const audit = await t.app.kernel.db
      .selectFrom('account_audit_log')
      .select(['metadata'])
      .where('action', '=', 'mcp.tool_called')
      .execute();
    assert.deepEqual(
      audit.map((row) => {
        const metadata = typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata;
        return [metadata.tool, metadata.outcome];
      }),
      [['echo', 'completed']],
    );
  });

  test('errors in the SDK words: an unknown tool, arguments that are no object, headers that disagree', async () => {
    const unknown = await statelessRpc(t, user.token, 'tools/call', { name: 'nope', arguments: {} }, { name: 'nope' });
    assert.deepEqual(json(unknown), { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Unknown tool: nope' } });
    const sdkBefore = await served('modern', 'sdk');
    const bad = await statelessRpc(t, user.token, 'tools/call', { name: 'echo', arguments: 5 }, { name: 'echo' });
    assert.equal(json(bad).error.code, -32602);
    assert.match(json(bad).error.message, /expected record/);
    const mismatch = await statelessRpc(
      t,
      user.token,
      'tools/call',
      { name: 'echo', arguments: {} },
      { name: 'other' },
    );
    assert.equal(mismatch.statusCode, 400);
    assert.match(json(mismatch).error.message, /Mcp-Name header names "other"/);
    assert.equal(await served('modern', 'sdk'), sdkBefore + 2);
  });

  test('a client that may be asked mid-call, or wants log messages, goes the SDK way', async () => {
    const before = await served('modern', 'sdk');
    const asks = await statelessRpc(
      t,
      user.token,
      'tools/call',
      { name: 'echo', arguments: {} },
      { name: 'echo', meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } } },
    );
    assert.equal(asks.statusCode, 200);
    const logs = await statelessRpc(
      t,
      user.token,
      'tools/call',
      { name: 'echo', arguments: {} },
      { name: 'echo', meta: { 'io.modelcontextprotocol/logLevel': 'info' } },
    );
    assert.equal(logs.statusCode, 200);
    assert.equal(await served('modern', 'sdk'), before + 2);
  });
});

describe('2025-11-25 session: the direct path answers inside the session', () => {
  const headersOf = (session: string) => ({
    authorization: `Bearer ${other.token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-11-25',
  });
  async function open(capabilities: Record<string, unknown> = {}) {
    const init = await t.inject({
      method: 'POST',
      url: '/api/v1/mcp',
      headers: {
        authorization: `Bearer ${other.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'direct-test', version: '1' } },
      },
    });
    assert.equal(init.statusCode, 200, init.payload);
    const session = String(init.headers['mcp-session-id']);
    await t.inject({
      method: 'POST',
      url: '/api/v1/mcp',
      headers: headersOf(session),
      payload: { jsonrpc: '2.0', method: 'notifications/initialized' },
    });
    return session;
  }
  const post = (session: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.inject({
      method: 'POST',
      url: '/api/v1/mcp',
      headers: { ...headersOf(session), ...headers },
      payload: { jsonrpc: '2.0', ...body },
    });

  test('a call answers JSON; one whose upstream logged answers its messages, then the answer, as one stream', async () => {
    const session = await open();
    const before = await served('legacy', 'direct');
    const simple = await post(session, {
      id: 2,
      method: 'tools/call',
      params: { name: 'test_simple_text', arguments: {} },
    });
    assert.match(String(simple.headers['content-type']), /^application\/json/);
    assert.deepEqual(json(simple), {
      jsonrpc: '2.0',
      id: 2,
      result: { content: [{ type: 'text', text: 'This is a simple text response for testing.' }] },
    });
    const logged = await post(session, {
      id: 3,
      method: 'tools/call',
      params: { name: 'test_tool_with_logging', arguments: {} },
    });
    assert.match(String(logged.headers['content-type']), /^text\/event-stream/);
    const events = logged.payload
      .split('\n\n')
      .filter(Boolean)
      .map((e) =>
        JSON.parse(
          e
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6),
        ),
      );
    assert.deepEqual(
      events.map((e) => e.method ?? `result ${e.id}`),
      ['notifications/message', 'notifications/message', 'notifications/message', 'result 3'],
    );
    assert.deepEqual(events[0].params, { level: 'info', data: 'Tool execution started' });
    assert.equal(events[3].result.content[0].text, 'Tool with logging executed successfully');
    assert.equal(await served('legacy', 'direct'), before + 2);
  });

  test("the messages below the session's logging/setLevel are dropped, as the SDK drops them", async () => {
    const session = await open();
    const set = await post(session, { id: 2, method: 'logging/setLevel', params: { level: 'warning' } });
    assert.equal(set.statusCode, 200);
    const logged = await post(session, {
      id: 3,
      method: 'tools/call',
      params: { name: 'test_tool_with_logging', arguments: {} },
    });
    assert.match(String(logged.headers['content-type']), /^application\/json/);
    assert.equal(json(logged).result.content[0].text, 'Tool with logging executed successfully');
  });

  test('progress, a client that may be elicited, or an Accept the transport refuses: the transport answers', async () => {
    const before = await served('legacy', 'sdk');
    const session = await open();
    const progress = await post(session, {
      id: 2,
      method: 'tools/call',
      params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p1' } },
    });
    assert.match(String(progress.headers['content-type']), /^text\/event-stream/);
    assert.equal((progress.payload.match(/notifications\/progress/g) ?? []).length, 3);
    const refused = await post(session, { id: 3, method: 'tools/list', params: {} }, { accept: 'application/json' });
    assert.equal(refused.statusCode, 406);
    const elicited = await open({ elicitation: { form: {}, url: {} } });
    const listed = await post(elicited, { id: 2, method: 'tools/list', params: {} });
    assert.match(String(listed.headers['content-type']), /^text\/event-stream/);
    // initialize and notifications/initialized of both sessions, and the three requests.
    assert.equal(await served('legacy', 'sdk'), before + 7);
  });

  test("another user's session id is not found, whichever path", async () => {
    const session = await open();
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/mcp',
      headers: { ...headersOf(session), authorization: `Bearer ${user.token}` },
      payload: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    });
    assert.equal(res.statusCode, 404);
    assert.equal(json(res).error.message, 'Session not found');
  });
});

test('upstream sessions: a log relay shares the session of a 2026-07-28 server, which sends no logs unasked', () => {
  const onLog = () => undefined;
  assert.equal(needsOwnSession({ onLog }, { kind: 'modern', discover: {} as never }), false);
  assert.equal(needsOwnSession({ onLog }, { kind: 'legacy' }), true);
  assert.equal(needsOwnSession({ onLog }), true);
  assert.equal(needsOwnSession({}, undefined), false);
  const sampling = { capability: {}, createMessage: async () => ({}) };
  assert.equal(needsOwnSession({ sampling }, { kind: 'modern', discover: {} as never }), true);
});
