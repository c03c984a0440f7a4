import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startConformanceUpstream, type ConformanceUpstream } from '../helpers/conformance-upstream.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { addInstance, endpointOf, mcpUser, modernClient, type McpUser } from '../helpers/mcp-gateway.js';

// An upstream's progress, log messages, sampling and elicitation through Gantry to a 2025-era
// client and back (docs/connectors.md, MCP pass-through).
let t: TestApp;
let upstream: ConformanceUpstream;
let user: McpUser;

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0].text;

async function client(capabilities: Record<string, unknown> = {}) {
  const c = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(endpointOf(t)), {
      requestInit: { headers: { authorization: `Bearer ${user.token}` } },
    }),
  );
  return c;
}

before(async () => {
  t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  await t.server.start();
  upstream = await startConformanceUpstream();
  user = await mcpUser(t);
  await addInstance(t, user, upstream.url, { displayName: 'Conformance', toolPrefix: '' });
});
after(async () => {
  await upstream.close();
  await t.close();
});

describe('MCP pass-through (2025-11-25 session)', () => {
  test('upstream progress reaches the client under its own progressToken', async () => {
    const c = await client();
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await c.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    assert.deepEqual(
      seen.map((p) => [p.progress, p.total]),
      [
        [0, 100],
        [50, 100],
        [100, 100],
      ],
    );
    assert.equal(seen[1].message, 'Completed step 50 of 100');
    // The upstream saw a token of Gantry's, not the client's.
    assert.notEqual(text(result), 'no progress token');
    await c.close();
  });

  test('no progressToken from the client: none asked of the upstream, nothing sent', async () => {
    const c = await client();
    const result = await c.callTool({ name: 'test_tool_with_progress', arguments: {} });
    assert.equal(text(result), 'no progress token');
    await c.close();
  });

  test('upstream log messages reach the client', async () => {
    const c = await client();
    const logs: unknown[] = [];
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    const result = await c.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.equal(text(result), 'Tool with logging executed successfully');
    assert.deepEqual(logs, [
      { level: 'info', data: 'Tool execution started' },
      { level: 'info', data: 'Tool processing data' },
      { level: 'info', data: 'Tool execution completed' },
    ]);
    await c.close();
  });

  test("the upstream's sampling request reaches the client's handler; its answer goes back", async () => {
    const c = await client({ sampling: {} });
    const prompts: string[] = [];
    c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const content = req.params.messages[0].content as { text: string };
      prompts.push(content.text);
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'Paris' } };
    });
    const result = await c.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } });
    assert.deepEqual(prompts, ['Capital of France?']);
    assert.equal(text(result), 'LLM response: Paris');
    await c.close();
  });

  test("the upstream's elicitation reaches the client's handler; its answer goes back", async () => {
    const c = await client({ elicitation: {} });
    const messages: string[] = [];
    c.setRequestHandler(ElicitRequestSchema, async (req) => {
      messages.push(req.params.message);
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    const result = await c.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    assert.deepEqual(messages, ['Who are you?']);
    assert.match(text(result), /action=accept/);
    assert.match(text(result), /"username":"ada"/);
    await c.close();
  });

  test('a client without sampling: the upstream is refused at once and the result says so', async () => {
    const c = await client();
    const started = Date.now();
    const result = await c.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
    assert.ok(Date.now() - started < 5_000);
    assert.equal((result as { isError?: boolean }).isError, true);
    assert.match(text(result), /MCP server failed the call/);
    await c.close();
  });
});

/** SDK 2.x client pinned to 2026-07-28, declaring the given capabilities, as the test's user (or another's token). */
async function modern(
  capabilities: Record<string, unknown>,
  options: Record<string, unknown> = {},
  token = user.token,
) {
  const c = new ModernClient(
    { name: 'relay-modern', version: '2.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } }, ...options },
  );
  await c.connect(
    new ModernTransport(new URL(endpointOf(t)), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return c;
}

describe('MCP pass-through (2026-07-28 request)', () => {
  test("the upstream's sampling request is an input_required round; the client's answer goes back", async () => {
    const c = await modern({ sampling: {} });
    const prompts: string[] = [];
    c.setRequestHandler('sampling/createMessage', async (req) => {
      prompts.push((req.params.messages[0].content as { text: string }).text);
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'Paris' } };
    });
    const result = await c.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } });
    assert.deepEqual(prompts, ['Capital of France?']);
    assert.equal(text(result), 'LLM response: Paris');
    await c.close();
  });

  test("the upstream's form elicitation is an input_required round; the client's answer goes back", async () => {
    const c = await modern({ elicitation: { form: {} } });
    const messages: string[] = [];
    c.setRequestHandler('elicitation/create', async (req) => {
      messages.push(req.params.message);
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    const result = await c.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    assert.deepEqual(messages, ['Who are you?']);
    assert.match(text(result), /action=accept/);
    assert.match(text(result), /"username":"ada"/);
    await c.close();
  });

  test('the requestState serves only its own call: other arguments, another user, a forged or used state are refused', async () => {
    const c = await modern({ sampling: {} }, { inputRequired: { autoFulfill: false } });
    const call = (params: Record<string, unknown>, client = c) =>
      client.request({ method: 'tools/call', params } as never, { allowInputRequired: true } as never) as Promise<
        Record<string, unknown>
      >;
    const first = await call({ name: 'test_sampling', arguments: { prompt: 'Who?' } });
    assert.equal(first.resultType, 'input_required');
    const state = first.requestState as string;
    const [key] = Object.keys(first.inputRequests as object);
    assert.equal((first.inputRequests as Record<string, { method: string }>)[key].method, 'sampling/createMessage');
    const answer = { [key]: { model: 'm', role: 'assistant', content: { type: 'text', text: 'Ada' } } };
    const refused = /requestState/;
    await assert.rejects(
      call({ name: 'test_sampling', arguments: { prompt: 'Other' }, requestState: state, inputResponses: answer }),
      refused,
    );
    await assert.rejects(
      call({ name: 'test_sampling', arguments: { prompt: 'Who?' }, requestState: 'forged', inputResponses: answer }),
      refused,
    );
    const stranger = await mcpUser(t);
    const other = await modern({ sampling: {} }, { inputRequired: { autoFulfill: false } }, stranger.token);
    await assert.rejects(
      call(
        { name: 'test_sampling', arguments: { prompt: 'Who?' }, requestState: state, inputResponses: answer },
        other,
      ),
      refused,
    );
    await other.close();
    const done = await call({
      name: 'test_sampling',
      arguments: { prompt: 'Who?' },
      requestState: state,
      inputResponses: answer,
    });
    assert.equal(text(done), 'LLM response: Ada');
    await assert.rejects(
      call({ name: 'test_sampling', arguments: { prompt: 'Who?' }, requestState: state, inputResponses: answer }),
      refused,
    );
    await c.close();
  });

  test('upstream progress reaches the client; sampling is not offered upstream, so the upstream fails cleanly', async () => {
    const c = await modernClient(endpointOf(t), user.token);
    const seen: number[] = [];
    await c.callTool({ name: 'test_tool_with_progress', arguments: {} }, { onprogress: (p) => seen.push(p.progress) });
    assert.deepEqual(seen, [0, 50, 100]);
    const result = await c.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
    assert.equal((result as { isError?: boolean }).isError, true);
    assert.match(text(result), /Method not found/);
    await c.close();
  });
});
