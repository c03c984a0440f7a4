import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/lib/clock.js';

/** How long another node's change feed may take to deliver a change (docs/status.md). */
const DELIVERY_MS = 2_000;

interface Answer {
  status: number;
  etag: string;
  lastModified: string;
  body: Buffer;
}

const answer = async (t: TestApp, url: string, headers: Record<string, string> = {}): Promise<Answer> => {
  const res = await t.inject({ url, headers });
  return {
    status: res.statusCode,
    etag: res.headers.etag as string,
    lastModified: res.headers['last-modified'] as string,
    body: res.rawPayload,
  };
};

const assertSameAnswer = (a: Answer, b: Answer, url: string) => {
  assert.equal(a.status, 200, url);
  assert.equal(b.status, 200, url);
  assert.ok(a.body.equals(b.body), `${url}: the same bytes on both nodes`);
  assert.equal(b.etag, a.etag, url);
  assert.equal(b.lastModified, a.lastModified, url);
};

/** Asks `t` until its answer's ETag is no longer `old`: the change feed's delivery, bounded. */
async function changed(t: TestApp, url: string, old: string): Promise<Answer> {
  const deadline = Date.now() + DELIVERY_MS;
  for (;;) {
    const res = await answer(t, url);
    if (res.etag !== old) return res;
    if (Date.now() > deadline) assert.fail(`${url}: the change did not reach the other node within ${DELIVERY_MS} ms`);
    await sleep(25);
  }
}

/**
 * Two Gantry apps over one database (one SQLite file, or one PostgreSQL database), each with its
 * own projection, as two nodes behind a load balancer: the same data must give the same bytes,
 * ETag and Last-Modified on both, whatever each node saw before (docs/status.md, Projections and
 * caching). Their clocks agree, as NTP keeps them.
 */
describe('status answers on two nodes over one database', () => {
  let a: TestApp;
  let b: TestApp;
  let incidentId: string;
  const clock = new ManualClock('2026-03-02T10:00:05.100Z');
  const urls = () => [
    '/api/v1/status',
    '/api/v1/status/services',
    '/api/v1/status/services/core',
    '/api/v1/status/components?serviceSlug=core',
    '/api/v1/status/incidents?page=1&limit=5',
    `/api/v1/status/incidents/${incidentId}`,
    '/api/v1/status/maintenance',
    '/api/v1/status/snapshots/2026-03-01',
    '/api/v1/status/uptime/24h',
    '/status',
    '/status/feed.atom',
  ];

  before(async () => {
    a = await createTestApp({ clock });
    b = await createTestApp({ clock, dataDir: a.dataDir });
    // As `serve` does: each node watches the change feed (on PostgreSQL only a started feed LISTENs).
    await a.app.kernel.changes.start();
    await b.app.kernel.changes.start();
    const s = a.app.services.status;
    await s.createService({ slug: 'core', name: 'Core' });
    await s.createComponent({ serviceSlug: 'core', slug: 'core-db', name: 'Database' });
    await s.writeDailySnapshot(new Date('2026-03-02T00:00:00Z'));
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  it('the same data gives the same bytes, ETag and Last-Modified on both, whatever each built before', async () => {
    const s = a.app.services.status;
    const incident = await s.createIncident({ title: 'Slow queries', impact: 'minor', message: 'Looking' });
    incidentId = incident.id;
    // Node A builds every answer now, then sees two more changes; node B builds nothing until later.
    for (const url of urls()) assert.equal((await answer(a, url)).status, 200, url);
    clock.set('2026-03-02T10:00:07.300Z');
    await s.updateIncident(incidentId, { status: 'identified', message: 'Found it' });
    const summary = await answer(a, '/api/v1/status');
    clock.set('2026-03-02T10:00:07.900Z');
    await s.setComponentStatus('core-db', 'partial_outage');
    await changed(a, '/api/v1/status', summary.etag);
    clock.set('2026-03-02T10:00:41.000Z');
    await b.app.kernel.changes.poll();
    for (const url of urls()) {
      const fromA = await answer(a, url);
      const fromB = await answer(b, url);
      assertSameAnswer(fromA, fromB, url);
      // As of the latest change: 10:00:07.900.
      assert.equal(fromA.lastModified, 'Mon, 02 Mar 2026 10:00:07 GMT', url);
    }
  });

  it("a change made through A reaches B, and both answer the same new validators; A's ETag is B's 304", async () => {
    clock.set('2026-03-02T10:02:07.000Z');
    const old = await answer(b, '/api/v1/status');
    assert.equal(old.lastModified, 'Mon, 02 Mar 2026 10:02:00 GMT', 'nothing changed: as of the minute');
    await a.app.services.status.setComponentStatus('core-db', 'major_outage');
    const onB = await changed(b, '/api/v1/status', old.etag);
    const onA = await answer(a, '/api/v1/status');
    assertSameAnswer(onA, onB, '/api/v1/status');
    assert.equal(onA.lastModified, 'Mon, 02 Mar 2026 10:02:07 GMT');
    assert.equal(JSON.parse(onB.body.toString()).data.status, 'major_outage');
    for (const url of urls()) assertSameAnswer(await answer(a, url), await answer(b, url), url);

    const byTag = await answer(b, '/api/v1/status', { 'if-none-match': onA.etag });
    assert.equal(byTag.status, 304);
    assert.equal(byTag.etag, onA.etag);
    assert.equal(byTag.lastModified, onA.lastModified);
    // The change fell on a whole second: A's date confirms B's copy too.
    assert.equal((await answer(b, '/api/v1/status', { 'if-modified-since': onA.lastModified })).status, 304);
    // The old validators, from either node, are confirmed by neither.
    for (const node of [a, b]) {
      assert.equal((await answer(node, '/api/v1/status', { 'if-none-match': old.etag })).status, 200);
      assert.equal((await answer(node, '/api/v1/status', { 'if-modified-since': old.lastModified })).status, 200);
    }
  });

  it('a change made through B reaches A the same way', async () => {
    clock.set('2026-03-02T10:02:30.450Z');
    const old = await answer(a, '/api/v1/status/components?serviceSlug=core');
    await b.app.services.status.setComponentStatus('core-db', 'operational');
    const onA = await changed(a, '/api/v1/status/components?serviceSlug=core', old.etag);
    const onB = await answer(b, '/api/v1/status/components?serviceSlug=core');
    assertSameAnswer(onA, onB, 'components');
    assert.equal(onB.lastModified, 'Mon, 02 Mar 2026 10:02:30 GMT');
    // A sub-second change: its own second may hold other versions, on either node.
    const byDate = await answer(a, '/api/v1/status/components?serviceSlug=core', {
      'if-modified-since': onB.lastModified,
    });
    assert.equal(byDate.status, 200);
    assert.equal(byDate.etag, onB.etag);
  });

  it('the minute turning without a write gives both nodes the same new version', async () => {
    const before_ = await answer(a, '/api/v1/status/uptime/24h');
    clock.set('2026-03-02T10:05:12.000Z');
    // Neither node's refresh job has run: each builds as of 10:05:00 on its first request.
    const fromB = await answer(b, '/api/v1/status/uptime/24h');
    clock.set('2026-03-02T10:05:48.000Z');
    const fromA = await answer(a, '/api/v1/status/uptime/24h');
    assertSameAnswer(fromA, fromB, 'uptime');
    assert.notEqual(fromA.etag, before_.etag, 'the rolling window moved');
    assert.equal(fromA.lastModified, 'Mon, 02 Mar 2026 10:05:00 GMT');
    assert.equal(JSON.parse(fromA.body.toString()).data.computed_at, '2026-03-02T10:05:00.000Z');
  });

  it('a maintenance window starting moves both nodes at once, when the cluster job records it', async () => {
    const s = a.app.services.status;
    await s.createMaintenance({
      title: 'Disk swap',
      serviceSlug: 'core',
      startsAt: '2026-03-02T10:06:00.000Z',
      endsAt: '2026-03-02T11:00:00.000Z',
    });
    await b.app.kernel.changes.poll();
    // Past its start but before the job has moved it: both still show it scheduled, alike.
    clock.set('2026-03-02T10:06:03.000Z');
    const waiting = await answer(a, '/api/v1/status/maintenance');
    assertSameAnswer(waiting, await answer(b, '/api/v1/status/maintenance'), 'maintenance');
    assert.equal(JSON.parse(waiting.body.toString()).data[0].status, 'scheduled');
    // The transitions job runs on one node of the cluster; its write is the change.
    clock.set('2026-03-02T10:06:08.000Z');
    assert.equal((await s.advanceMaintenance(clock.now())).length, 1);
    const onB = await changed(b, '/api/v1/status/maintenance', waiting.etag);
    assertSameAnswer(await answer(a, '/api/v1/status/maintenance'), onB, 'maintenance');
    assert.equal(JSON.parse(onB.body.toString()).data[0].status, 'in_progress');
    assert.equal(onB.lastModified, 'Mon, 02 Mar 2026 10:06:08 GMT');
    assertSameAnswer(await answer(a, '/api/v1/status'), await answer(b, '/api/v1/status'), 'summary');
  });
});
