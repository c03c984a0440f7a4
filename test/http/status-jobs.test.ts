import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testEnvFor } from '../helpers/postgres.js';
import { ManualClock } from '../../src/lib/clock.js';
import { statusJobs } from '../../src/status/jobs.js';
import { collectJobs, createAppContext } from '../../src/app.js';
import { resolveConfig } from '../../src/config.js';
import { TEST_ENV } from '../helpers/app.js';
import { createLogger } from '../../src/lib/logger.js';

const H = 3_600_000;
const json = async (t: TestApp, url: string) => JSON.parse((await t.inject(url)).payload);

describe('status jobs', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-07-01T00:00:00.000Z');
  before(async () => {
    t = await createTestApp({ clock });
    await t.app.services.status.createService({ slug: 'svc', name: 'Svc' });
    await t.app.services.status.createComponent({ serviceSlug: 'svc', slug: 'svc-main', name: 'Main' });
  });
  after(() => t.close());

  it('are registered: maintenance transitions, projection refresh, subscribers, the daily snapshot at midnight UTC', () => {
    const jobs = statusJobs(t.app.services.status);
    assert.deepEqual(
      jobs.map((j) => [j.name, j.pattern]),
      [
        ['status.maintenance-transitions', '*/10 * * * * *'],
        ['status.projection-refresh', '0 * * * * *'],
        ['status.subscriber-fanout', '*/10 * * * * *'],
        ['status.webhook-delivery', '*/15 * * * * *'],
        ['status.subscriptions-housekeeping', '0 23 * * * *'],
        ['status.daily-snapshot', '0 0 0 * * *'],
      ],
    );
    assert.ok(collectJobs(t.app).some((j) => j.name === 'status.daily-snapshot'));
  });

  it('maintenance moves scheduled -> in_progress -> completed on time, and the JSON follows', async () => {
    const s = t.app.services.status;
    const jobs = statusJobs(t.app.services.status);
    const run = (name: string) => jobs.find((j) => j.name === name)!.run(clock.now());
    const m = await s.createMaintenance({
      title: 'Swap disks',
      serviceSlug: 'svc',
      startsAt: '2026-07-01T02:00:00Z',
      endsAt: '2026-07-01T03:00:00Z',
    });
    const cancelled = await s.createMaintenance({
      title: 'Called off',
      serviceSlug: 'svc',
      startsAt: '2026-07-01T02:00:00Z',
      endsAt: '2026-07-01T03:00:00Z',
    });
    await s.updateMaintenance(cancelled.id, { status: 'cancelled' });
    assert.equal(m.status, 'scheduled');
    clock.set('2026-07-01T01:59:59.000Z');
    assert.deepEqual(await run('status.maintenance-transitions'), []);
    const before_ = await t.inject('/api/v1/status/maintenance');
    clock.set('2026-07-01T02:00:00.000Z');
    assert.deepEqual(await run('status.maintenance-transitions'), [{ id: m.id, from: 'scheduled', to: 'in_progress' }]);
    const during = await t.inject('/api/v1/status/maintenance');
    assert.notEqual(during.headers.etag, before_.headers.etag);
    assert.deepEqual(
      JSON.parse(during.payload).data.map((x: any) => [x.title, x.status]),
      [['Swap disks', 'in_progress']],
    );
    assert.equal((await json(t, '/api/v1/status')).data.status, 'maintenance');
    clock.set('2026-07-01T03:00:00.000Z');
    assert.deepEqual(await run('status.maintenance-transitions'), [{ id: m.id, from: 'in_progress', to: 'completed' }]);
    assert.deepEqual((await json(t, '/api/v1/status/maintenance')).data, []);
    assert.equal((await json(t, '/api/v1/status')).data.status, 'operational');
    const rows = await s.listMaintenance();
    assert.deepEqual(rows.map((r) => [r.title, r.status]).sort(), [
      ['Called off', 'cancelled'],
      ['Swap disks', 'completed'],
    ]);
  });

  it('a window missed entirely goes straight to completed', async () => {
    const s = t.app.services.status;
    const m = await s.createMaintenance({
      title: 'Short',
      serviceSlug: 'svc',
      startsAt: '2026-07-01T04:00:00Z',
      endsAt: '2026-07-01T04:10:00Z',
    });
    clock.set('2026-07-01T05:00:00.000Z');
    assert.deepEqual(await s.advanceMaintenance(clock.now()), [{ id: m.id, from: 'scheduled', to: 'completed' }]);
  });

  it('rolling uptime moves with the minute without any write; the refresh job only prepares it', async () => {
    const s = t.app.services.status;
    clock.set('2026-07-01T06:00:00.000Z');
    await s.setComponentStatus('svc-main', 'major_outage');
    clock.set('2026-07-01T07:00:00.000Z');
    await s.setComponentStatus('svc-main', 'operational');
    const day = await json(t, '/api/v1/status/uptime/24h');
    assert.equal(day.data.downtime_minutes, 60);
    assert.equal(day.data.uptime_percent, Math.round((1 - 1 / 7) * 1_000_000) / 10_000); // created at 00:00, 7 h ago
    assert.equal(day.data.computed_at, '2026-07-01T07:00:00.000Z');
    // Later within the same minute: the same version, as of the latest change.
    clock.set('2026-07-01T07:00:59.999Z');
    assert.deepEqual(await json(t, '/api/v1/status/uptime/24h'), day);
    // 30 hours later the outage has left the 24 h window: the answer is as of the current minute,
    // whether the refresh job has run yet or not.
    clock.set('2026-07-02T13:00:20.000Z');
    const fresh = await json(t, '/api/v1/status/uptime/24h');
    assert.equal(fresh.data.downtime_minutes, 0);
    assert.equal(fresh.data.uptime_percent, 100);
    assert.equal(fresh.data.computed_at, '2026-07-02T13:00:00.000Z');
    await statusJobs(t.app.services.status)
      .find((j) => j.name === 'status.projection-refresh')!
      .run(clock.now());
    assert.deepEqual(await json(t, '/api/v1/status/uptime/24h'), fresh, 'the job builds the same version');
    assert.equal((await json(t, '/api/v1/status/uptime/7d')).data.downtime_minutes, 60);
  });

  it('the daily snapshot job at midnight writes the day that ended and the uptime summaries', async () => {
    clock.set('2026-07-03T00:00:00.000Z');
    const snap = statusJobs(t.app.services.status).find((j) => j.name === 'status.daily-snapshot')!;
    await snap.run(clock.now());
    const res = await json(t, '/api/v1/status/snapshots/2026-07-02');
    assert.equal(res.data.snapshot_date, '2026-07-02');
    assert.equal(res.data.scope_type, 'platform');
    assert.equal(res.data.scope_key, 'all');
    assert.equal(res.data.computed_at, '2026-07-03T00:00:00.000Z');
    assert.deepEqual(Object.keys(res.data.payload), ['headline', 'status', 'services']);
    assert.equal(res.data.payload.headline, 'All Systems Operational');
    assert.equal(res.data.payload.services[0].slug, 'svc');
    assert.equal(res.data.payload.services[0].uptime_24h, 100);
    assert.equal((await t.inject('/api/v1/status/snapshots/2026-07-03')).statusCode, 404);
    const summaries = await t.app.kernel.db
      .selectFrom('status_uptime_summaries')
      .selectAll()
      .orderBy('window')
      .execute();
    assert.deepEqual(summaries.map((r) => r.window).sort(), ['1y', '24h', '30d', '7d', '90d']);
    const week = JSON.parse(summaries.find((r) => r.window === '7d')!.payload);
    assert.equal(week.downtime_minutes, 60);
    assert.ok(summaries.every((r) => r.computed_at === '2026-07-03T00:00:00.000Z'));
    // Running again the same night replaces, never duplicates.
    await snap.run(clock.now());
    const count = await t.app.kernel.db
      .selectFrom('status_snapshots')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  it('a change made by another process reaches this projection through the change feed', async () => {
    // As `serve` does: on PostgreSQL only a started feed LISTENs (docs/postgres.md, Change feed).
    await t.app.kernel.changes.start();
    const env = await testEnvFor(t.dataDir, TEST_ENV);
    const other = await createAppContext(resolveConfig({ dataDir: t.dataDir }, env), {
      clock,
      logger: createLogger('silent'),
      env,
    });
    const before_ = await t.inject('/api/v1/status/components');
    try {
      await other.services.status.setComponentStatus('svc-main', 'partial_outage');
    } finally {
      await other.kernel.close();
    }
    await t.app.kernel.changes.poll();
    const after_ = await t.inject('/api/v1/status/components');
    assert.notEqual(after_.headers.etag, before_.headers.etag);
    assert.equal(JSON.parse(after_.payload).data[0].current_status, 'partial_outage');
  });
});

describe('component history', () => {
  it('two changes in the same millisecond keep one row with the later status', async () => {
    const clock = new ManualClock('2026-08-01T00:00:00.000Z');
    const t = await createTestApp({ clock });
    try {
      const s = t.app.services.status;
      await s.createService({ slug: 'h', name: 'H' });
      const c = await s.createComponent({ serviceSlug: 'h', slug: 'h1', name: 'H1' });
      await s.setComponentStatus('h1', 'major_outage'); // same instant as creation
      clock.advance(H);
      await s.setComponentStatus('h1', 'partial_outage');
      await s.setComponentStatus('h1', 'partial_outage'); // no change, no row
      clock.advance(H);
      const rows = await t.app.kernel.db
        .selectFrom('status_component_history')
        .select(['status', 'changed_at'])
        .where('component_id', '=', c.id)
        .orderBy('changed_at')
        .execute();
      assert.deepEqual(rows, [
        { status: 'major_outage', changed_at: '2026-08-01T00:00:00.000Z' },
        { status: 'partial_outage', changed_at: '2026-08-01T01:00:00.000Z' },
      ]);
      const up = JSON.parse((await t.inject('/api/v1/status/uptime/24h')).payload);
      assert.equal(up.data.downtime_minutes, 60 + 18); // the platform's figure is its only component's
    } finally {
      await t.close();
    }
  });
});
