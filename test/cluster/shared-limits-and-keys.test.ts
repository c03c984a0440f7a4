import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type TestCluster } from '../helpers/cluster.js';

/**
 * Two nodes on one PostgreSQL database (docs/postgres.md, Several nodes): the security rate
 * limits count for the cluster, not per node, and each node accepts what the other signed.
 */
describe('two nodes on one database', () => {
  let cluster: TestCluster;
  before(async () => {
    // Behind a load balancer on loopback: each test is a client address of its own.
    cluster = await startCluster(2, { GANTRY_RATE_LIMIT_MULTIPLIER: '1', GANTRY_TRUSTED_PROXIES: '127.0.0.1' });
  });
  after(() => cluster?.stop());

  const call = async (
    node: number,
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
    from = '203.0.113.1',
  ) => {
    const res = await fetch(`${cluster.nodes[node].url}/api/v1/${path}`, {
      method,
      headers: {
        'x-forwarded-for': from,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return {
      status: res.status,
      headers: res.headers,
      body: (await res.json()) as { data: any; meta: any; error: { code: string } | null },
    };
  };

  it('the sign-in limit (8 per minute) holds for both nodes together, with the same headers and 429 envelope', async () => {
    const outcomes: Array<{ status: number; remaining: string | null; code: string | null }> = [];
    for (let i = 0; i < 12; i++) {
      const res = await call(i % 2, 'POST', 'auth/login', null, {
        email: 'nobody@example.test',
        password: `wrong password ${i}`,
      });
      outcomes.push({
        status: res.status,
        remaining: res.headers.get('x-ratelimit-remaining'),
        code: res.body.error?.code ?? null,
      });
    }
    assert.deepEqual(
      outcomes.map((o) => o.status),
      [401, 401, 401, 401, 401, 401, 401, 401, 429, 429, 429, 429],
    );
    // Remaining counts down across nodes: each node saw the other's attempts.
    assert.deepEqual(
      outcomes.map((o) => o.remaining),
      ['7', '6', '5', '4', '3', '2', '1', '0', '0', '0', '0', '0'],
    );
    assert.deepEqual(
      outcomes.slice(8).map((o) => o.code),
      ['RATE_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED'],
    );
    const refused = await call(1, 'POST', 'auth/login', null, { email: 'nobody@example.test', password: 'x' });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('x-ratelimit-limit'), '8');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  });

  it('a session token minted on A works on B, and a cursor from A continues on B', async () => {
    const created = await cluster.cli([
      'user',
      'create',
      '--email',
      'two-nodes@example.test',
      '--password',
      'long enough pw',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const userId = (JSON.parse(created.stdout) as { id: string }).id;
    for (let n = 0; n < 5; n++) {
      const sent = await cluster.cli(['notify', '--user', userId, '--title', `Hello ${n}`, '--body', 'b', '--json']);
      assert.equal(sent.code, 0, sent.stderr);
    }
    // Another client address than the test above, whose sign-in budget is spent.
    const login = await call(
      0,
      'POST',
      'auth/login',
      null,
      { email: 'two-nodes@example.test', password: 'long enough pw' },
      '203.0.113.9',
    );
    assert.equal(login.status, 200, JSON.stringify(login.body.error));
    const token = login.body.data.accessToken as string;

    const me = await call(1, 'GET', 'auth/me', token);
    assert.equal(me.status, 200, JSON.stringify(me.body.error));
    assert.equal(me.body.data.id, userId);

    const first = await call(0, 'GET', 'notifications?limit=2&paging=cursor', token);
    assert.equal(first.status, 200);
    assert.equal(first.body.data.length, 2);
    const cursor = first.body.meta.nextCursor as string;
    assert.ok(cursor);
    const next = await call(1, 'GET', `notifications?limit=2&cursor=${encodeURIComponent(cursor)}`, token);
    assert.equal(next.status, 200, JSON.stringify(next.body.error));
    assert.equal(next.body.data.length, 2);
    const seen = new Set([...first.body.data, ...next.body.data].map((n: { id: string }) => n.id));
    assert.equal(seen.size, 4);
  });
});
