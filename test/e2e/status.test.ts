import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';

describe('status service of the built binary', () => {
  let g: RunningGantry;
  let statusUrl: string;
  before(async () => {
    g = await spawnGantry({ env: { GANTRY_STATUS_PORT: '0' } });
    const line = g.stdout.find((l) => l.startsWith('gantry listening on'))!;
    statusUrl = /\(status on (\S+)\)/.exec(line)![1];
  });
  after(() => g.stop());

  it('a CLI status change reaches the running server within a second', async () => {
    for (const args of [
      ['service', 'create', '--slug', 'edge', '--name', 'Edge'],
      ['component', 'create', '--service', 'edge', '--slug', 'edge-cdn', '--name', 'CDN'],
    ]) {
      const r = await g.cli(args);
      assert.equal(r.code, 0, r.stderr);
    }
    // Let the creations above arrive first, so the change below is the only one in flight.
    for (let i = 0; i < 40; i++) {
      const list = (await (await fetch(`${g.url}/api/v1/status/components`)).json()) as { data: unknown[] };
      if (list.data.length === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const first = await fetch(`${g.url}/api/v1/status`);
    const before_ = (await first.json()) as { data: { status: string } };
    const etag = first.headers.get('etag');
    assert.equal(before_.data.status, 'operational');

    const set = await g.cli(['component', 'set-status', 'edge-cdn', 'major_outage', '--json']);
    assert.equal(set.code, 0, set.stderr);
    const changedAt = Date.now();
    let seen: { status: number; body: { data: { status: string; headline: string } } | null } = {
      status: 0,
      body: null,
    };
    while (Date.now() - changedAt < 1000) {
      const res = await fetch(`${g.url}/api/v1/status`, { headers: { 'if-none-match': etag! } });
      seen = { status: res.status, body: res.status === 200 ? ((await res.json()) as never) : null };
      if (seen.body?.data.status === 'major_outage') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(seen.status, 200, 'the old ETag stopped matching within a second');
    const elapsed = Date.now() - changedAt;
    assert.ok(elapsed < 1000, `visible after ${elapsed} ms`);
    assert.equal(seen.body!.data.status, 'major_outage');
    assert.equal(seen.body!.data.headline, 'Major System Outage');
  });

  it('the second listener serves the status service and page, and nothing else', async () => {
    const res = await fetch(`${statusUrl}/api/v1/status/components`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=30, stale-while-revalidate=300');
    const body = (await res.json()) as { data: Array<{ slug: string }> };
    assert.deepEqual(
      body.data.map((c) => c.slug),
      ['edge-cdn'],
    );
    const page = await fetch(`${statusUrl}/status`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Major System Outage/);
    const login = await fetch(`${statusUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(login.status, 404);
    const conditional = await fetch(`${statusUrl}/api/v1/status/components`, {
      headers: { 'if-none-match': res.headers.get('etag')! },
    });
    assert.equal(conditional.status, 304);
  });
});
