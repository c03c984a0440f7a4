// A 2025-11-25 session's GET stream (docs/mcp.md, The GET stream): its head reaches the client as
// soon as the stream opens, not with the first keep-alive; a second GET on the session takes
// the stream over (the client reconnected) instead of a 409, and the first one ends.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { endpointOf, mcpUser, type McpUser } from '../helpers/mcp-gateway.js';

let t: TestApp;
let user: McpUser;

before(async () => {
  t = await createTestApp();
  await t.server.start();
  user = await mcpUser(t);
});
after(() => t.close());

const send = (body: unknown, headers: Record<string, string>, method = 'POST', signal?: AbortSignal) =>
  fetch(endpointOf(t), {
    method,
    headers: {
      authorization: `Bearer ${user.token}`,
      accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
    ...(signal ? { signal } : {}),
  });

async function openSession() {
  const init = await send(
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    },
    {},
  );
  assert.equal(init.status, 200);
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
  await init.text();
  await (await send({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
  return session;
}

/** Reads a stream until it ends; what it carried. */
async function drain(res: Response): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
  return text;
}

test('the GET stream answers its head at once (well before the first keep-alive)', async () => {
  const session = await openSession();
  // The keep-alive comes every 15 s; the head must not wait for it.
  const listen = await send(undefined, session, 'GET', AbortSignal.timeout(5_000));
  assert.equal(listen.status, 200);
  assert.match(listen.headers.get('content-type')!, /^text\/event-stream/);
  assert.equal(listen.headers.get('mcp-session-id'), session['mcp-session-id']);
  await listen.body!.cancel();
  await (await send(undefined, session, 'DELETE')).text();
});

test('a second GET takes the stream over: the first ends, the second gets what the session sends', async () => {
  const session = await openSession();
  const first = await send(undefined, session, 'GET', AbortSignal.timeout(10_000));
  assert.equal(first.status, 200);
  const firstText = drain(first);
  const second = await send(undefined, session, 'GET', AbortSignal.timeout(10_000));
  assert.equal(second.status, 200, 'not 409');
  assert.match(second.headers.get('content-type')!, /^text\/event-stream/);
  // The first stream ends (the client that opened it reconnects if it still wants one).
  const carried = await firstText;
  assert.doesNotMatch(carried, /"jsonrpc"/, 'the first stream carried no message');
  await second.body!.cancel();
  // A GET in another user's name, or without the session, is still refused as before.
  const stranger = await mcpUser(t);
  const foreign = await fetch(endpointOf(t), {
    method: 'GET',
    headers: { authorization: `Bearer ${stranger.token}`, accept: 'text/event-stream', ...session },
  });
  assert.equal(foreign.status, 404);
  assert.equal((await foreign.json()).error.code, -32001);
  await (await send(undefined, session, 'DELETE')).text();
});
