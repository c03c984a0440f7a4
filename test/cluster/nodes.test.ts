import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import type { RunningGantry } from '../helpers/spawn.js';

type Body = { data: any; error: { code: string; message: string } | null };

async function api(node: RunningGantry, method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${node.url}/api/v1/${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Body };
}

/** Polls until check() holds or `withinMs` has passed; the time it took. */
async function within(withinMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Date.now() - started;
}

/** Several nodes on one PostgreSQL database (docs/scaling.md). */
describe('two nodes on one database', () => {
  let cluster: TestCluster;
  let a: RunningGantry;
  let b: RunningGantry;
  before(async () => {
    cluster = await startCluster(2, {
      GANTRY_RATE_LIMIT_MULTIPLIER: '1000',
      GANTRY_LOG_LEVEL: 'debug',
      // The knob that exists for the refresh job: every second, so several ticks fit in a test.
      GANTRY_CONNECTOR_REFRESH_CRON: '* * * * * *',
    });
    [a, b] = cluster.nodes;
  });
  after(() => cluster.stop());

  let seq = 0;
  const signUp = async () => {
    const email = `node${++seq}@example.test`;
    const created = await cluster.cli(['user', 'create', '--email', email, '--password', 'long enough pw', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const login = await api(a, 'POST', 'auth/login', null, { email, password: 'long enough pw' });
    assert.equal(login.status, 200, JSON.stringify(login.body));
    return { email, userId: JSON.parse(created.stdout).id as string, ...login.body.data };
  };

  it('/readyz on each node reports the database and the LISTEN session', async () => {
    for (const node of [a, b]) {
      const res = await fetch(`${node.url}/readyz`);
      assert.equal(res.status, 200);
      assert.deepEqual(((await res.json()) as Body).data, { status: 'ready', database: 'up', changeFeed: 'up' });
    }
  });

  it('a token minted on A is accepted by B; signing out on A is refused by B within a second', async () => {
    const session = await signUp();
    const me = await api(b, 'GET', 'auth/me', session.accessToken);
    assert.equal(me.status, 200, JSON.stringify(me.body)); // B now holds the session as active
    const out = await api(a, 'POST', 'auth/logout', session.accessToken, { refreshToken: session.refreshToken });
    assert.ok(out.status < 300, JSON.stringify(out.body));
    const took = await within(1_000, async () => (await api(b, 'GET', 'auth/me', session.accessToken)).status === 401);
    assert.ok(took <= 1_000);
  });

  it('a change made by the CLI is visible on B within a second', async () => {
    const owner = await signUp();
    const member = await signUp();
    const account = await api(a, 'POST', 'accounts', owner.accessToken, { slug: 'cli-seen', legalName: 'Cli Seen' });
    assert.equal(account.status, 201, JSON.stringify(account.body));
    const id = account.body.data.id as string;
    const added = await cluster.cli(['account', 'member', 'add', id, '--user', member.email, '--role', 'member']);
    assert.equal(added.code, 0, added.stderr);
    await within(1_000, async () => (await api(b, 'GET', `accounts/${id}`, member.accessToken)).status === 200);
    const removed = await cluster.cli(['account', 'member', 'remove', id, member.email, '--yes']);
    assert.equal(removed.code, 0, removed.stderr);
    await within(1_000, async () => (await api(b, 'GET', `accounts/${id}`, member.accessToken)).status !== 200);
  });

  it('20 concurrent uses of one refresh token across both nodes: one succeeds, the family ends revoked', async () => {
    const session = await signUp();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(i % 2 ? b : a, 'POST', 'auth/refresh', null, { refreshToken: session.refreshToken }),
      ),
    );
    const won = results.filter((r) => r.status === 200);
    assert.equal(won.length, 1, results.map((r) => r.status).join(','));
    for (const r of results) if (r.status !== 200) assert.equal(r.status, 401);
    // Reuse of a consumed token revoked the family: the winner's tokens are dead too, on both nodes.
    const next = won[0].body.data;
    assert.equal((await api(a, 'POST', 'auth/refresh', null, { refreshToken: next.refreshToken })).status, 401);
    await within(1_000, async () => (await api(b, 'GET', 'auth/me', next.accessToken)).status === 401);
  });

  it('a cluster job runs once per tick across both nodes', async () => {
    const claims = () =>
      [a, b].flatMap((node, i) =>
        node.stdout
          .filter((line) => line.includes('job tick claimed') && line.includes('connectors.oauth-refresh'))
          .map((line) => ({ node: i, tick: JSON.parse(line).tick as string })),
      );
    await within(10_000, async () => claims().length >= 5);
    const seen = claims();
    const ticks = seen.map((c) => c.tick);
    assert.equal(new Set(ticks).size, ticks.length, `each tick once: ${ticks.sort().join(' ')}`);
    const skipped = [a, b].flatMap((n) => n.stdout.filter((l) => l.includes('job tick run elsewhere')));
    assert.ok(skipped.length > 0, 'the other node saw the ticks and left them');
  });

  it('kill -9 of a node loses no write it acknowledged', async () => {
    const c = await cluster.addNode();
    const session = await signUp();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await api(c, 'POST', 'accounts', session.accessToken, { slug: `kill-${i}`, legalName: `Kill ${i}` });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      ids.push(res.body.data.id);
    }
    c.proc.kill('SIGKILL');
    await new Promise((resolve) => c.proc.once('exit', resolve));
    for (const id of ids) assert.equal((await api(b, 'GET', `accounts/${id}`, session.accessToken)).status, 200);
  });
});
