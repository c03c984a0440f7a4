import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('gantry status publishing commands', () => {
  let dataDir: string;
  const run = (args: string[]) => cli(args, { dataDir });
  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-cli-status-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('service create / update / list', async () => {
    const created = await run([
      'service',
      'create',
      '--slug',
      'api',
      '--name',
      'API',
      '--description',
      'Public API',
      '--sort-order',
      '2',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const svc = created.json<any>();
    assert.deepEqual(
      [svc.slug, svc.name, svc.description, svc.sort_order, svc.is_public],
      ['api', 'API', 'Public API', 2, true],
    );
    const priv = await run(['service', 'create', '--slug', 'ops', '--name', 'Ops', '--private', '--json']);
    assert.equal(priv.json<any>().is_public, false);
    const dup = await run(['service', 'create', '--slug', 'api', '--name', 'Again']);
    assert.equal(dup.code, 2);
    assert.match(dup.stderr, /already exists/);
    const updated = await run(['service', 'update', 'ops', '--public', '--sort-order', '1', '--json']);
    assert.deepEqual([updated.json<any>().is_public, updated.json<any>().sort_order], [true, 1]);
    const list = await run(['service', 'list', '--json']);
    assert.deepEqual(
      list.json<any[]>().map((s) => s.slug),
      ['ops', 'api'],
    );
    const human = await run(['service', 'list']);
    assert.match(human.stdout, /slug\s+name/);
  });

  it('component create and set-status (history recorded)', async () => {
    const created = await run([
      'component',
      'create',
      '--service',
      'api',
      '--slug',
      'api-rest',
      '--name',
      'REST',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.json<any>().current_status, 'operational');
    const set = await run(['component', 'set-status', 'api-rest', 'major_outage', '--json']);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.json<any>().current_status, 'major_outage');
    const human = await run(['component', 'set-status', 'api-rest', 'operational']);
    assert.equal(human.stdout, 'api-rest: operational');
    const bad = await run(['component', 'set-status', 'api-rest', 'on_fire']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /status must be one of operational, degraded_performance/);
    const unknown = await run(['component', 'set-status', 'nope', 'operational']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Component nope not found/);
    const list = await run(['component', 'list', '--json']);
    assert.deepEqual(
      list.json<any[]>().map((c) => [c.slug, c.current_status]),
      [['api-rest', 'operational']],
    );
  });

  it('incident create / update / list / show, through postmortem_ready', async () => {
    const created = await run([
      'incident',
      'create',
      '--title',
      'API errors',
      '--impact',
      'partial',
      '--status',
      'investigating',
      '--message',
      'Looking into it',
      '--service',
      'api',
      '--author',
      'Dana',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const inc = created.json<any>();
    assert.deepEqual(
      [inc.title, inc.impact, inc.status, inc.services, inc.updates.length, inc.updates[0].author_name],
      ['API errors', 'partial', 'investigating', ['api'], 1, 'Dana'],
    );
    const early = await run(['incident', 'update', inc.id, '--status', 'postmortem_ready', '--message', 'too soon']);
    assert.equal(early.code, 2);
    assert.match(early.stderr, /cannot move from investigating to postmortem_ready/);
    const resolved = await run(['incident', 'update', inc.id, '--status', 'resolved', '--message', 'Fixed', '--json']);
    assert.equal(resolved.json<any>().status, 'resolved');
    assert.ok(resolved.json<any>().resolved_at);
    const pm = await run([
      'incident',
      'update',
      inc.slug,
      '--status',
      'postmortem_ready',
      '--message',
      'Postmortem published',
      '--json',
    ]);
    assert.equal(pm.code, 0, pm.stderr);
    assert.deepEqual(
      pm.json<any>().updates.map((u: any) => u.status),
      ['postmortem_ready', 'resolved', 'investigating'],
    );
    assert.equal(pm.json<any>().resolved_at, resolved.json<any>().resolved_at);
    const list = await run(['incident', 'list', '--json']);
    assert.deepEqual(
      list.json<any[]>().map((i) => [i.id, i.status]),
      [[inc.id, 'postmortem_ready']],
    );
    const show = await run(['incident', 'show', inc.id]);
    assert.match(show.stdout, /API errors \(postmortem_ready, partial\)/);
    const badImpact = await run([
      'incident',
      'create',
      '--title',
      'x',
      '--impact',
      'huge',
      '--status',
      'investigating',
      '--message',
      'm',
    ]);
    assert.equal(badImpact.code, 2);
    assert.match(badImpact.stderr, /impact must be one of minor, partial, major/);
  });

  it('maintenance create / update / list', async () => {
    const created = await run([
      'maintenance',
      'create',
      '--title',
      'DB upgrade',
      '--service',
      'api',
      '--starts',
      '2099-01-01T00:00:00Z',
      '--ends',
      '2099-01-01T01:00:00Z',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const m = created.json<any>();
    assert.deepEqual(
      [m.status, m.starts_at, m.ends_at],
      ['scheduled', '2099-01-01T00:00:00.000Z', '2099-01-01T01:00:00.000Z'],
    );
    const backwards = await run([
      'maintenance',
      'create',
      '--title',
      'x',
      '--service',
      'api',
      '--starts',
      '2099-01-02T00:00:00Z',
      '--ends',
      '2099-01-01T00:00:00Z',
    ]);
    assert.equal(backwards.code, 2);
    assert.match(backwards.stderr, /ends must be after starts/);
    const cancelled = await run(['maintenance', 'update', m.id, '--status', 'cancelled', '--json']);
    assert.equal(cancelled.json<any>().status, 'cancelled');
    const reopen = await run(['maintenance', 'update', m.id, '--status', 'scheduled']);
    assert.equal(reopen.code, 2);
    assert.match(reopen.stderr, /cannot move from cancelled to scheduled/);
    const list = await run(['maintenance', 'list', '--json']);
    assert.deepEqual(
      list.json<any[]>().map((x) => x.status),
      ['cancelled'],
    );
  });

  it('missing required options exit 2 naming the flag (no TTY)', async () => {
    const cases: Array<[string[], string]> = [
      [['service', 'create', '--name', 'N'], '--slug'],
      [['component', 'create', '--service', 'api', '--slug', 's'], '--name'],
      [['component', 'set-status', 'api-rest'], '--status'],
      [['incident', 'create', '--title', 'T', '--impact', 'minor', '--message', 'M'], '--status'],
      [['incident', 'update', 'x', '--status', 'resolved'], '--message'],
      [['maintenance', 'create', '--title', 'T', '--service', 'api', '--starts', '2099-01-01T00:00:00Z'], '--ends'],
      [['maintenance', 'update', 'x'], '--status'],
    ];
    for (const [args, flag] of cases) {
      const res = await run([...args, '--json']);
      assert.equal(res.code, 2, args.join(' '));
      // With --json the failure is one document on stdout too (docs/kernel.md, CLI).
      assert.deepEqual(res.json(), { error: { code: 'USAGE', message: `missing required option ${flag}` } });
      assert.match(res.stderr, new RegExp(`missing required option ${flag}`), args.join(' '));
    }
  });

  it('what the CLI published is what the status JSON shows', async () => {
    const t: TestApp = await createTestApp({ dataDir });
    try {
      const res = JSON.parse((await t.inject('/api/v1/status')).payload);
      assert.deepEqual(
        res.data.services.map((s: any) => s.slug),
        ['ops', 'api'],
      );
      assert.equal(res.data.headline, 'All Systems Operational');
      const inc = JSON.parse((await t.inject('/api/v1/status/incidents')).payload);
      assert.equal(inc.data[0].status, 'postmortem_ready');
    } finally {
      await t.close();
    }
  });
});
