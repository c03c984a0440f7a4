// Gantry's client of an upstream resumes a call's SSE stream that the upstream closed mid-call
// (docs/connectors.md, Stream resumption): a GET with Last-Event-ID, through the guarded fetch,
// with the instance's headers, after the server's `retry:` delay (capped).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { type EventStore, StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, type JSONRPCMessage, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addInstance, endpointOf, mcpUser, modernClient, type McpUser } from '../helpers/mcp-gateway.js';

interface Seen {
  method: string;
  lastEventId?: string;
  authorization?: string;
}

/**
 * A 2025-11-25 upstream (SDK 1.x, sessions, an event store) whose tool `cut` closes the call's
 * SSE stream before answering; the answer reaches only a client that resumes the stream.
 */
async function startCuttingUpstream(retryMs: number) {
  const seen: Seen[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const events: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  const eventStore: EventStore = {
    async storeEvent(streamId, message) {
      const id = `${streamId}::${events.length}`;
      events.push({ id, streamId, message });
      return id;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const at = events.findIndex((e) => e.id === lastEventId);
      const streamId = lastEventId.split('::')[0];
      for (const e of events.slice(at + 1)) if (e.streamId === streamId) await send(e.id, e.message);
      return streamId;
    },
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    seen.push({
      method: req.method ?? '',
      ...(typeof req.headers['last-event-id'] === 'string' ? { lastEventId: req.headers['last-event-id'] } : {}),
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    const sid = req.headers['mcp-session-id'] as string | undefined;
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid) return void res.writeHead(404).end();
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore,
        retryInterval: retryMs,
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      transport = created;
      const mcp = new Server({ name: 'cutting-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [{ name: 'cut', description: 'Closes its stream, then answers', inputSchema: { type: 'object' } }],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
        created.closeSSEStream(extra.requestId);
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { content: [{ type: 'text', text: 'answered after the cut' }] };
      });
      await mcp.connect(created);
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seen,
    close: async () => {
      await Promise.all([...transports.values()].map((tr) => tr.close().catch(() => undefined)));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let t: TestApp;
let user: McpUser;
const upstreams: Array<Awaited<ReturnType<typeof startCuttingUpstream>>> = [];

before(async () => {
  t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  await t.server.start();
  user = await mcpUser(t);
});
after(async () => {
  for (const u of upstreams) await u.close();
  await t.close();
});

async function callCut(retryMs: number, prefix: string) {
  const upstream = await startCuttingUpstream(retryMs);
  upstreams.push(upstream);
  await addInstance(t, user, upstream.url, { displayName: `Cutting ${prefix}`, toolPrefix: prefix });
  const client = await modernClient(endpointOf(t), user.token);
  const started = Date.now();
  const result = await client.callTool({ name: `${prefix}cut`, arguments: {} });
  const ms = Date.now() - started;
  await client.close();
  return { upstream, result: result as { isError?: boolean; content: Array<{ text: string }> }, ms };
}

test('an upstream stream cut mid-call is resumed with Last-Event-ID and the instance headers', async () => {
  const { upstream, result, ms } = await callCut(200, 'a_');
  assert.equal(result.isError, undefined);
  assert.equal(result.content[0].text, 'answered after the cut');
  // Well before the 10-second outbound limit: the answer came on the resumed stream.
  assert.ok(ms < 8_000, `took ${ms} ms`);
  const resumed = upstream.seen.filter((s) => s.method === 'GET' && s.lastEventId);
  assert.equal(resumed.length, 1);
  assert.equal(resumed[0].authorization, 'Bearer upstream-secret');
});

test("a server's long retry delay is capped (5 s), so the call still answers within its limit", async () => {
  const { upstream, result, ms } = await callCut(60_000, 'b_');
  assert.equal(result.content[0].text, 'answered after the cut');
  // Waited the cap, not the minute asked for (the call's own limit is 10 s).
  assert.ok(ms >= 4_500, `took ${ms} ms`);
  assert.equal(upstream.seen.filter((s) => s.method === 'GET' && s.lastEventId).length, 1);
});
