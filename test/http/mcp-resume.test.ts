// A 2025-11-25 client that loses its POST stream mid-call resumes it with Last-Event-ID and still
// gets the answer (docs/mcp.md, Resumable streams).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startConformanceUpstream, type ConformanceUpstream } from '../helpers/conformance-upstream.js';
import { addInstance, endpointOf, mcpUser, type McpUser } from '../helpers/mcp-gateway.js';

let t: TestApp;
let upstream: ConformanceUpstream;
let user: McpUser;

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

interface SseEvent {
  id?: string;
  retry?: string;
  data: string;
}

/** The SSE events of a response, one at a time. */
async function* events(res: Response): AsyncGenerator<SseEvent> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = { data: '' };
        for (const line of block.split('\n')) {
          const [field, ...rest] = line.split(':');
          const value = rest.join(':').replace(/^ /, '');
          if (field === 'id') event.id = value;
          else if (field === 'retry') event.retry = value;
          else if (field === 'data') event.data += value;
        }
        if (block.startsWith(':')) continue;
        yield event;
      }
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

const send = (body: unknown, headers: Record<string, string>, method = 'POST') =>
  fetch(endpointOf(t), {
    method,
    headers: {
      authorization: `Bearer ${user.token}`,
      accept: 'application/json, text/event-stream',
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  });

test('a POST stream lost mid-call is resumed with Last-Event-ID and the answer arrives', async () => {
  const init = await send(
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    },
    {},
  );
  const sessionId = init.headers.get('mcp-session-id')!;
  await init.text();
  const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
  await (await send({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();

  const call = await send(
    {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p' } },
    },
    session,
  );
  assert.match(call.headers.get('content-type')!, /^text\/event-stream/);
  const stream = events(call);
  const priming = (await stream.next()).value as SseEvent;
  assert.ok(priming.id, 'the priming event has an id');
  assert.equal(priming.retry, '1000');
  assert.equal(priming.data, '');
  // The client loses the stream after the priming event.
  await stream.return(undefined);

  const resumed = await send(undefined, { ...session, 'last-event-id': priming.id! }, 'GET');
  assert.equal(resumed.status, 200);
  const messages: Array<{ id?: number; method?: string; result?: { content: Array<{ text: string }> } }> = [];
  for await (const event of events(resumed)) {
    if (!event.data) continue;
    const message = JSON.parse(event.data);
    messages.push(message);
    if (message.id === 7) break;
  }
  const answer = messages.find((m) => m.id === 7);
  assert.ok(answer, `no answer after resuming: ${JSON.stringify(messages)}`);
  assert.notEqual(answer.result!.content[0].text, 'no progress token');
  assert.ok(messages.some((m) => m.method === 'notifications/progress'));
  await (await send(undefined, session, 'DELETE')).text();
});

test('an event id the session never gave resumes nothing', async () => {
  const init = await send(
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    },
    {},
  );
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
  await init.text();
  const res = await send(undefined, { ...session, 'last-event-id': 'not-an-id' }, 'GET');
  assert.ok(res.status === 200 || res.status === 400, `status ${res.status}`);
  assert.equal((await res.text()).includes('"result"'), false);
  await (await send(undefined, session, 'DELETE')).text();
});

test('gantry_sse_streams_open counts the GET stream of a session and a POST answered as a stream', async () => {
  const gauge = async (stream: string) => {
    const values = (await t.app.kernel.metrics.registry.getSingleMetric('gantry_sse_streams_open')?.get())?.values;
    return values?.find((v) => v.labels.stream === stream)?.value ?? 0;
  };
  const settles = async (stream: string, value: number) => {
    const deadline = Date.now() + 3000;
    while ((await gauge(stream)) !== value && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await gauge(stream), value, stream);
  };
  const [getBefore, postBefore] = [await gauge('mcp-get'), await gauge('mcp-post')];
  const init = await send(
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    },
    {},
  );
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
  await init.text();
  await (await send({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();

  const listen = await send(undefined, session, 'GET');
  assert.equal(listen.status, 200);
  assert.match(listen.headers.get('content-type')!, /^text\/event-stream/);
  await settles('mcp-get', getBefore + 1);

  const call = await send(
    {
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'q' } },
    },
    session,
  );
  assert.match(call.headers.get('content-type')!, /^text\/event-stream/);
  const stream = events(call);
  await stream.next();
  assert.equal(await gauge('mcp-post'), postBefore + 1);
  for await (const event of stream) if (event.data && JSON.parse(event.data).id === 8) break;
  await settles('mcp-post', postBefore);

  await listen.body!.cancel();
  await settles('mcp-get', getBefore);
  await (await send(undefined, session, 'DELETE')).text();
});
