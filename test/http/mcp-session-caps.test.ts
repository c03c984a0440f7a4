import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { asUser } from '../helpers/accounts.js';
import { makeClient } from '../helpers/oauth.js';
import { mcpSetup, mcpTokens } from '../helpers/mcp-oauth.js';

// 2025-era sessions are capped per user over all their clients and workspaces, and a full
// process takes room only from the opener's own sessions (docs/mcp.md, Protocol eras).
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'caps-test', version: '1.0.0' } },
};

/** A bare initialize: the answer and the session id it opened (null when it opened none). */
async function initialize(t: TestApp, token: string) {
  const res = await t.inject({
    method: 'POST',
    url: '/api/v1/mcp',
    headers: { ...HEADERS, authorization: `Bearer ${token}` },
    payload: INITIALIZE,
  });
  return { res, sessionId: (res.headers['mcp-session-id'] as string | undefined) ?? null };
}

async function open(t: TestApp, token: string): Promise<string> {
  const { res, sessionId } = await initialize(t, token);
  assert.equal(res.statusCode, 200, res.payload);
  assert.ok(sessionId);
  return sessionId;
}

/** A ping on the session (which counts as a use of it): true if the session is still open. */
async function alive(t: TestApp, token: string, sessionId: string): Promise<boolean> {
  const res = await t.inject({
    method: 'POST',
    url: '/api/v1/mcp',
    headers: {
      ...HEADERS,
      authorization: `Bearer ${token}`,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
    },
    payload: { jsonrpc: '2.0', id: 2, method: 'ping' },
  });
  assert.ok(res.statusCode === 200 || res.statusCode === 404, `${res.statusCode} ${res.payload}`);
  return res.statusCode === 200;
}

/** A user with an account and an MCP token of the default workspace. */
async function someone(t: TestApp) {
  const setup = await mcpSetup(t);
  return (await mcpTokens(t, setup)).access_token;
}

describe('sessions per user', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
  });
  after(async () => t.close());

  test('one user keeps 16 sessions over all their clients and workspaces, the most recently used', async () => {
    // The review's case (N-L2): 20 sessions with each of 3 (client, workspace) pairs.
    const setup = await mcpSetup(t);
    const otherClient = await makeClient(t, { scopes: ['tools:call'] });
    const otherWorkspace = await t.app.services.accounts.workspaces.create(
      asUser(setup.user.id),
      setup.account.id,
      'Second',
    );
    const tokens = [
      (await mcpTokens(t, setup)).access_token,
      (await mcpTokens(t, { ...setup, client: otherClient })).access_token,
      (await mcpTokens(t, setup, { workspaceId: otherWorkspace.id })).access_token,
    ];
    const opened: Array<{ token: string; sessionId: string }> = [];
    for (let i = 0; i < 20; i++) for (const token of tokens) opened.push({ token, sessionId: await open(t, token) });

    const live: boolean[] = [];
    for (const s of opened) live.push(await alive(t, s.token, s.sessionId));
    assert.equal(live.filter(Boolean).length, 16, 'sessions alive of 60 opened');
    assert.deepEqual(
      live.map((up, i) => (up ? i : -1)).filter((i) => i >= 0),
      Array.from({ length: 16 }, (_, i) => 44 + i),
      'the last 16 opened',
    );

    // By last use: the oldest survivor, used again, outlives the next one.
    const [first, second] = opened.slice(44);
    assert.equal(await alive(t, first.token, first.sessionId), true);
    const newest = await open(t, tokens[1]);
    assert.equal(await alive(t, second.token, second.sessionId), false, 'the least recently used went');
    assert.equal(await alive(t, first.token, first.sessionId), true, 'the one used again stays');
    assert.equal(await alive(t, tokens[1], newest), true);
  });
});

describe('sessions in the process', () => {
  let t: TestApp;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock('2026-03-01T00:00:00Z');
    t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100', GANTRY_MCP_MAX_SESSIONS: '6' } });
  });
  after(async () => t.close());

  test("a full process takes room from the opener's own sessions, never another user's; else 503", async () => {
    const [a, b, c] = [await someone(t), await someone(t), await someone(t)];
    // B's sessions are the oldest by creation and by last use.
    const bSessions = [await open(t, b), await open(t, b)];
    clock.advance(1000);
    const aSessions = [];
    for (let i = 0; i < 4; i++) aSessions.push(await open(t, a));
    // A uses their first session again: their second is now their least recently used.
    assert.equal(await alive(t, a, aSessions[0]), true);

    const aMore = await open(t, a);
    for (const id of bSessions) assert.equal(await alive(t, b, id), true, "B's session survives A filling the process");
    assert.equal(await alive(t, a, aSessions[1]), false, "A's least recently used made the room");
    for (const id of [aSessions[0], ...aSessions.slice(2), aMore]) assert.equal(await alive(t, a, id), true);

    // C has no session to give up: refused, and nobody loses one.
    clock.advance(60_000);
    const refused = await initialize(t, c);
    assert.equal(refused.res.statusCode, 503);
    assert.equal(refused.sessionId, null);
    // The least recently used session goes idle 30 minutes after its use, a minute ago.
    assert.equal(refused.res.headers['retry-after'], String(30 * 60 - 60));
    assert.deepEqual(JSON.parse(refused.res.payload), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Server busy: too many MCP sessions are open on this server; try again later' },
    });
    for (const id of bSessions) assert.equal(await alive(t, b, id), true);

    // Idle sessions (30 minutes unused) are closed, which makes room again.
    clock.advance(30 * 60_000 + 1);
    const cSession = await open(t, c);
    assert.equal(await alive(t, c, cSession), true);
    assert.equal(await alive(t, b, bSessions[0]), false, 'closed when idle');
  });
});
