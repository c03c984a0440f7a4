import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, makeTeam } from '../helpers/factories.js';
import { makeClient } from '../helpers/oauth.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';
import { addInstance, endpointOf, legacyClient, mcpUser, modernClient, type McpUser } from '../helpers/mcp-gateway.js';
import { mcpSetup, mcpTokens, PRM_URL } from '../helpers/mcp-oauth.js';

// Who may reach the MCP endpoint, and what they may reach through it (docs/mcp.md, Security).
let t: TestApp;
let upstream: McpFake;
let other: McpFake;
let user: McpUser;

const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function post(token: string | null, body: unknown, headers: Record<string, string> = {}) {
  return fetch(endpointOf(t), {
    method: 'POST',
    headers: { ...JSON_HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: JSON.stringify(body),
  });
}

before(async () => {
  t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  await t.server.start();
  upstream = await startLegacyMcpServer({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
  other = await startLegacyMcpServer({ tools: [{ name: 'secret', inputSchema: { type: 'object' } }] });
  user = await mcpUser(t);
  await addInstance(t, user, upstream.url, { displayName: 'Fake', toolPrefix: '' });
});
after(async () => {
  await upstream.close();
  await other.close();
  await t.close();
});

describe('authorization', () => {
  test('no token: 401 with the challenge naming the resource metadata and the scope', async () => {
    const res = await post(null, PING);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${PRM_URL}", scope="tools:call"`);
    assert.deepEqual(await res.json(), {
      error: 'unauthorized',
      error_description: 'A bearer access token is required',
    });
  });

  test('a malformed Authorization header: 400 invalid_request', async () => {
    const res = await fetch(endpointOf(t), {
      method: 'POST',
      headers: { ...JSON_HEADERS, authorization: 'Basic abc' },
      body: JSON.stringify(PING),
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, 'invalid_request');
  });

  test('a first-party session token and a REST API access token are refused (401 invalid_token)', async () => {
    const session = user.headers.authorization.slice('Bearer '.length);
    const setup = await mcpSetup(t);
    const rest = await mcpTokens(t, setup, { query: { resource: undefined, scope: 'wallet:read' } });
    for (const token of [session, rest.access_token]) {
      const res = await post(token, PING);
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate')!, /^Bearer error="invalid_token"/);
      assert.match(res.headers.get('www-authenticate')!, /resource_metadata=/);
      assert.equal((await res.json()).error, 'invalid_token');
    }
  });

  test('an MCP token is refused by the REST API', async () => {
    const res = await t.inject({ url: '/api/v1/connectors/instances', headers: bearer(user.token) });
    assert.equal(res.statusCode, 401);
  });

  test('a foreign Origin is refused with 403 (DNS rebinding); the public origin passes', async () => {
    const res = await post(user.token, PING, { origin: 'http://evil.example' });
    assert.equal(res.status, 403);
    const body = await res.json();
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.error.code, -32000);
    const own = await post(user.token, PING, { origin: 'http://127.0.0.1:8080' });
    assert.notEqual(own.status, 403);
  });
});

describe("the token's workspace", () => {
  test('a member removed from the account is refused at once (401 invalid_token), with the challenge', async () => {
    const team = await makeTeam(t.app, ['member']);
    const member = team.members.member;
    const client = await makeClient(t, { scopes: ['tools:call'] });
    const tokens = await mcpTokens(t, {
      user: member.user,
      account: team.account,
      client,
      defaultWorkspace: team.account.defaultWorkspaceId,
    } as never);
    // Authorized (a session-less ping is the protocol's 400, not an authorization failure).
    assert.equal((await post(tokens.access_token, PING)).status, 400);
    const removed = await t.inject({
      method: 'DELETE',
      url: `/api/v1/accounts/${team.account.id}/members/${member.user.id}`,
      headers: team.owner.headers,
    });
    assert.equal(removed.statusCode, 200, removed.payload);
    const res = await post(tokens.access_token, PING);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate')!, /error="invalid_token"/);
    assert.match((await res.json()).error_description, /workspace/);
  });
});

describe('protocol', () => {
  test('event streams are neither compressed nor buffered', async () => {
    const client = await legacyClient(endpointOf(t), user.token);
    const sessionId = (client.transport as unknown as { sessionId: string }).sessionId;
    const res = await post(user.token, PING, {
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
      accept: 'application/json, text/event-stream',
      'accept-encoding': 'gzip',
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(res.headers.get('content-encoding'), null);
    assert.equal(res.headers.get('x-accel-buffering'), 'no');
    await res.text();
    await client.close();
  });

  test('JSON-RPC batches are refused', async () => {
    const res = await post(user.token, [PING, { ...PING, id: 2 }]);
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'JSON-RPC batches are not supported' },
    });
  });

  test('an unsupported protocol version is answered with the supported ones', async () => {
    const res = await post(
      user.token,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    );
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.ok(Array.isArray(body.error.data.supported), JSON.stringify(body));
    assert.ok(body.error.data.supported.includes('2026-07-28'));
  });

  test('a legacy session belongs to who opened it; DELETE ends it', async () => {
    const client = await legacyClient(endpointOf(t), user.token);
    const transport = client.transport as unknown as { sessionId: string; terminateSession(): Promise<void> };
    const sessionId = transport.sessionId;
    assert.ok(sessionId);
    const stranger = await mcpUser(t);
    const foreign = await post(stranger.token, PING, {
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
    });
    assert.equal(foreign.status, 404);
    const own = await post(user.token, PING, { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' });
    assert.equal(own.status, 200);
    await transport.terminateSession();
    const gone = await post(user.token, PING, { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' });
    assert.equal(gone.status, 404);
    await client.close();
  });
});

describe('workspaces and upstreams', () => {
  test("another workspace's tools are never listed or callable", async () => {
    const stranger = await mcpUser(t);
    await addInstance(t, stranger, other.url, { displayName: 'Other', toolPrefix: '' });
    const client = await modernClient(endpointOf(t), user.token);
    assert.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['echo'],
    );
    await assert.rejects(client.callTool({ name: 'secret', arguments: {} }), /Unknown tool: secret/);
    assert.equal(other.calls.length, 0);
    await client.close();
  });

  test("the upstream sees the vault's credential, never the client's token", async () => {
    const client = await legacyClient(endpointOf(t), user.token);
    await client.callTool({ name: 'echo', arguments: {} });
    await client.close();
    assert.ok(upstream.requests.length > 0);
    for (const request of upstream.requests) {
      assert.equal(request.headers.authorization, 'Bearer upstream-secret');
      assert.ok(!JSON.stringify(request.headers).includes(user.token));
    }
  });

  test('60 requests a minute per user, then 429 with Retry-After and a JSON-RPC error', async () => {
    const busy = await mcpUser(t);
    for (let i = 0; i < 60; i++) {
      const res = await post(busy.token, PING);
      assert.notEqual(res.status, 429, `request ${i + 1}`);
      await res.arrayBuffer();
    }
    const res = await post(busy.token, PING);
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    const body = await res.json();
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.error.code, -32000);
    // Per user: someone else is not held back.
    assert.notEqual((await post(user.token, PING)).status, 429);
  });
});
