import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/lib/clock.js';

const CACHE = 'public, max-age=30, stale-while-revalidate=300';
const URL_ = '/api/v1/status';

const asctime = (ms: number): string => {
  const d = new Date(ms);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} ${d.getUTCFullYear()}`;
};
const rfc850 = (ms: number): string => {
  const d = new Date(ms);
  const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const [, day, mon, year, time] = d.toUTCString().split(' ');
  return `${days[d.getUTCDay()]}, ${day}-${mon}-${year.slice(2)} ${time} GMT`;
};

describe('status caching: ETag, Last-Modified, conditional requests', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-02-10T08:00:00.500Z');
  before(async () => {
    t = await createTestApp({ clock });
    await t.app.services.status.createService({ slug: 'core', name: 'Core' });
    await t.app.services.status.createComponent({ serviceSlug: 'core', slug: 'core-db', name: 'Database' });
  });
  after(() => t.close());

  it('200 carries exactly the cache headers and a strong SHA-1 ETag of the exact bytes', async () => {
    const res = await t.inject(URL_);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], CACHE);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers.etag, `"${createHash('sha1').update(res.rawPayload).digest('hex')}"`);
    assert.equal(res.headers['last-modified'], 'Tue, 10 Feb 2026 08:00:00 GMT');
    assert.ok(res.headers['x-request-id']);
    assert.equal(res.headers['x-ratelimit-limit'], undefined);
    // The same bytes for everyone: a second request (another request id) gets identical bytes.
    const again = await t.inject({ url: URL_, headers: { 'x-request-id': 'someone-else-123' } });
    assert.equal(again.payload, res.payload);
    assert.equal(again.headers.etag, res.headers.etag);
  });

  it('200 then 304 on the same ETag, with ETag, Last-Modified, Cache-Control and no body', async () => {
    const first = await t.inject(URL_);
    const second = await t.inject({ url: URL_, headers: { 'if-none-match': first.headers.etag as string } });
    assert.equal(second.statusCode, 304);
    assert.equal(second.payload, '');
    assert.equal(second.headers.etag, first.headers.etag);
    assert.equal(second.headers['last-modified'], first.headers['last-modified']);
    assert.equal(second.headers['cache-control'], CACHE);
    assert.equal(second.headers['content-length'], undefined);
    assert.ok(second.headers['x-request-id']);
  });

  it('If-None-Match: *, lists, and weak comparison', async () => {
    const { etag } = (await t.inject(URL_)).headers as { etag: string };
    for (const inm of ['*', `W/${etag}`, `"nope", ${etag}`, `"a", W/${etag}, "b"`]) {
      const res = await t.inject({ url: URL_, headers: { 'if-none-match': inm } });
      assert.equal(res.statusCode, 304, inm);
      assert.equal(res.headers.etag, etag, 'our strong tag, never the weak one sent');
      assert.equal(res.headers['cache-control'], CACHE);
    }
    const miss = await t.inject({ url: URL_, headers: { 'if-none-match': '"0000"' } });
    assert.equal(miss.statusCode, 200);
  });

  it('If-Modified-Since: 304 only for a date at or after the as-of instant; every HTTP-date form', async () => {
    const lm = Date.parse((await t.inject(URL_)).headers['last-modified'] as string);
    // As of 08:00:00.500 (the latest change): a copy dated 08:00:00 may be an older version of
    // that second, so its own date cannot confirm it; any later second can.
    const cases: Array<[string, number]> = [
      [new Date(lm + 1000).toUTCString(), 304],
      [new Date(lm + 60_000).toUTCString(), 304],
      [new Date(lm).toUTCString(), 200],
      [new Date(lm - 1000).toUTCString(), 200],
      [rfc850(lm + 1000), 304],
      [rfc850(lm), 200],
      [rfc850(lm - 1000), 200],
      [asctime(lm + 1000), 304],
      [asctime(lm), 200],
      [asctime(lm - 1000), 200],
      ['not a date', 200],
    ];
    for (const [ims, status] of cases) {
      const res = await t.inject({ url: URL_, headers: { 'if-modified-since': ims } });
      assert.equal(res.statusCode, status, ims);
      assert.equal(res.headers['cache-control'], CACHE, ims);
      if (status === 304) assert.equal(res.payload, '');
    }
  });

  it('a version as of a whole second (the minute) is confirmed by its own date', async () => {
    const earlier = await t.inject(URL_);
    clock.set('2026-02-10T08:01:30.000Z');
    const res = await t.inject(URL_);
    // Nothing changed: the same bytes, now as of the start of the current minute.
    assert.equal(res.headers.etag, earlier.headers.etag);
    assert.equal(res.headers['last-modified'], 'Tue, 10 Feb 2026 08:01:00 GMT');
    const lm = Date.parse(res.headers['last-modified'] as string);
    for (const [ims, status] of [
      [new Date(lm).toUTCString(), 304],
      [rfc850(lm), 304],
      [asctime(lm), 304],
      [new Date(lm - 1000).toUTCString(), 200],
      [earlier.headers['last-modified'] as string, 200],
    ] as Array<[string, number]>) {
      const cond = await t.inject({ url: URL_, headers: { 'if-modified-since': ims } });
      assert.equal(cond.statusCode, status, ims);
      assert.equal(cond.headers['last-modified'], res.headers['last-modified'], ims);
    }
  });

  it('asctime dates are UTC whatever the local time zone (hapi reads them as local time)', async () => {
    const lm = Date.parse((await t.inject(URL_)).headers['last-modified'] as string);
    const saved = process.env.TZ;
    try {
      // West of UTC, local parsing would push an older date past Last-Modified: must stay 200.
      process.env.TZ = 'America/New_York';
      assert.equal(
        (await t.inject({ url: URL_, headers: { 'if-modified-since': asctime(lm - 3_600_000) } })).statusCode,
        200,
      );
      // East of UTC, local parsing would pull the next second before Last-Modified: must be 304.
      process.env.TZ = 'Asia/Tokyo';
      const exact = await t.inject({ url: URL_, headers: { 'if-modified-since': asctime(lm + 1000) } });
      assert.equal(exact.statusCode, 304);
      assert.equal(exact.headers['cache-control'], CACHE);
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('If-None-Match wins over If-Modified-Since', async () => {
    const first = await t.inject(URL_);
    const future = new Date(Date.parse(first.headers['last-modified'] as string) + 86_400_000).toUTCString();
    const stale = await t.inject({ url: URL_, headers: { 'if-none-match': '"other"', 'if-modified-since': future } });
    assert.equal(stale.statusCode, 200, 'a non-matching If-None-Match ignores a satisfied If-Modified-Since');
    assert.equal(stale.payload, first.payload);
    const fresh = await t.inject({
      url: URL_,
      headers: { 'if-none-match': first.headers.etag as string, 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
    });
    assert.equal(fresh.statusCode, 304, 'a matching If-None-Match ignores a failed If-Modified-Since');
  });

  it('a change gives a new ETag and Last-Modified at once; the old validators no longer confirm', async () => {
    clock.set('2026-02-10T08:01:40.250Z');
    const before_ = await t.inject(URL_);
    assert.equal(before_.headers['last-modified'], 'Tue, 10 Feb 2026 08:01:00 GMT');
    await t.app.services.status.setComponentStatus('core-db', 'degraded_performance');
    const after_ = await t.inject(URL_);
    assert.notEqual(after_.headers.etag, before_.headers.etag);
    assert.equal(JSON.parse(after_.payload).data.status, 'degraded_performance');
    // As of the change, never after Date (RFC 9110 8.8.2.1).
    assert.equal(after_.headers['last-modified'], 'Tue, 10 Feb 2026 08:01:40 GMT');
    assert.ok(Date.parse(after_.headers['last-modified'] as string) <= Date.parse(after_.headers.date as string));
    for (const headers of [
      { 'if-none-match': before_.headers.etag as string },
      { 'if-modified-since': before_.headers['last-modified'] as string },
      // The change's own second may hold other versions: its date cannot confirm this one.
      { 'if-modified-since': after_.headers['last-modified'] as string },
    ]) {
      const res = await t.inject({ url: URL_, headers });
      assert.equal(res.statusCode, 200, JSON.stringify(headers));
      assert.equal(res.headers.etag, after_.headers.etag);
    }
    const next = await t.inject({ url: URL_, headers: { 'if-modified-since': 'Tue, 10 Feb 2026 08:01:41 GMT' } });
    assert.equal(next.statusCode, 304);
    // Another change in the same second: a new ETag, the same Last-Modified, never confirmed by it.
    clock.advance(100);
    await t.app.services.status.setComponentStatus('core-db', 'operational');
    const again = await t.inject({
      url: URL_,
      headers: { 'if-modified-since': after_.headers['last-modified'] as string },
    });
    assert.equal(again.statusCode, 200);
    assert.notEqual(again.headers.etag, after_.headers.etag);
    assert.equal(again.headers['last-modified'], after_.headers['last-modified']);
  });

  it('a rebuild within the minute keeps ETag and Last-Modified; the next minute dates the same bytes anew', async () => {
    clock.set('2026-02-10T08:02:10.000Z');
    const first = await t.inject('/api/v1/status/services');
    const uptime = await t.inject('/api/v1/status/uptime/24h');
    assert.equal(first.headers['last-modified'], 'Tue, 10 Feb 2026 08:02:00 GMT');
    clock.advance(20_000);
    await t.app.services.status.projection.refresh();
    const second = await t.inject('/api/v1/status/services');
    assert.equal(second.headers.etag, first.headers.etag);
    assert.equal(second.headers['last-modified'], first.headers['last-modified']);
    assert.equal((await t.inject('/api/v1/status/uptime/24h')).headers.etag, uptime.headers.etag);
    clock.advance(60_000);
    const third = await t.inject('/api/v1/status/services');
    assert.equal(third.headers.etag, first.headers.etag, 'no figure of the list moves with time');
    assert.equal(third.headers['last-modified'], 'Tue, 10 Feb 2026 08:03:00 GMT');
    const later = await t.inject('/api/v1/status/uptime/24h');
    assert.notEqual(later.headers.etag, uptime.headers.etag, 'the uptime answer is computed as of the minute');
    assert.equal(JSON.parse(later.payload).data.computed_at, '2026-02-10T08:03:00.000Z');
  });

  it('a burst of changes in one second: Last-Modified never after Date; an older copy of that second is never confirmed', async () => {
    clock.set('2026-02-10T08:05:10.050Z');
    const second = Date.parse('2026-02-10T08:05:10.000Z');
    const urls = ['/api/v1/status/maintenance', URL_, '/status'];
    const copies: Array<Record<string, { etag: string; lastModified: string; payload: string }>> = [];
    const dates: Array<[string, string, number]> = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(150);
      await t.app.services.status.createMaintenance({
        title: `Burst ${i}`,
        serviceSlug: 'core',
        startsAt: '2026-03-01T00:00:00Z',
        endsAt: '2026-03-01T01:00:00Z',
      });
      if (i === 4) await t.app.services.status.setComponentStatus('core-db', 'partial_outage');
      else if (i % 2 === 0) await t.app.services.status.setComponentStatus('core-db', 'degraded_performance');
      else await t.app.services.status.setComponentStatus('core-db', 'operational');
      const copy: (typeof copies)[number] = {};
      for (const url of urls) {
        const res = await t.inject(url);
        assert.equal(res.statusCode, 200, url);
        const lastModified = Date.parse(res.headers['last-modified'] as string);
        assert.ok(lastModified <= second, `${url}: Last-Modified ${res.headers['last-modified']} ahead of the clock`);
        dates.push([url, res.headers.date as string, lastModified]);
        copy[url] = {
          etag: res.headers.etag as string,
          lastModified: res.headers['last-modified'] as string,
          payload: res.payload,
        };
      }
      copies.push(copy);
    }
    for (const [url, date, lastModified] of dates) {
      assert.equal(Date.parse(date), second, `${url}: Date is the clock's second`);
      assert.ok(lastModified <= Date.parse(date), `${url}: Last-Modified after Date ${date}`);
    }
    assert.equal(new Set(copies.map((c) => c['/api/v1/status/maintenance'].etag)).size, 5);
    assert.equal(
      JSON.parse(copies[4]['/api/v1/status/maintenance'].payload).data.filter((m: { title: string }) =>
        m.title.startsWith('Burst '),
      ).length,
      5,
    );
    // The holder of the second-oldest copy asks with its date, in that second and any later one.
    for (const later of [0, 1_000, 30_000]) {
      clock.advance(later);
      for (const url of urls) {
        const stale = copies[1][url];
        const res = await t.inject({ url, headers: { 'if-modified-since': stale.lastModified } });
        assert.equal(res.statusCode, 200, `${url} +${later}ms`);
        assert.equal(res.payload, copies[4][url].payload, url);
        assert.equal(res.headers.etag, copies[4][url].etag, url);
        assert.ok(Date.parse(res.headers['last-modified'] as string) <= Date.parse(res.headers.date as string), url);
      }
    }
    // The newest copy of the burst, asked for with its own date: that second holds older copies
    // too, so the date cannot tell them apart and the answer is a 200 with the same bytes.
    for (const url of urls) {
      const res = await t.inject({ url, headers: { 'if-modified-since': copies[4][url].lastModified } });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers.etag, copies[4][url].etag, url);
    }
    // A date naming a later second than the one that holds the as-of instant confirms them.
    for (const url of urls) {
      const res = await t.inject({ url, headers: { 'if-modified-since': new Date(second + 1000).toUTCString() } });
      assert.equal(res.statusCode, 304, url);
      assert.equal(res.headers.etag, copies[4][url].etag, url);
    }
    // If-None-Match still decides first: the latest tag is confirmed whatever the date says.
    const latest = copies[4]['/api/v1/status/maintenance'];
    const byTag = await t.inject({
      url: '/api/v1/status/maintenance',
      headers: { 'if-none-match': latest.etag, 'if-modified-since': latest.lastModified },
    });
    assert.equal(byTag.statusCode, 304);
    await t.app.services.status.setComponentStatus('core-db', 'operational');
  });

  it('an answer first built long after the change carries the same date as one built at once', async () => {
    clock.set('2026-02-10T08:06:05.000Z');
    await t.app.services.status.createMaintenance({
      title: 'Late',
      serviceSlug: 'core',
      startsAt: '2026-04-01T00:00:00Z',
      endsAt: '2026-04-01T01:00:00Z',
    });
    const early = await t.inject('/api/v1/status/maintenance');
    assert.equal(early.headers['last-modified'], 'Tue, 10 Feb 2026 08:06:05 GMT');
    clock.set('2026-02-10T08:06:50.000Z');
    // Anonymous callers choose keys (page numbers): one nobody asked for before is built now.
    const late = await t.inject('/api/v1/status/incidents?page=7');
    assert.equal(late.headers['last-modified'], early.headers['last-modified']);
    // The change fell on a whole second: that date names the version exactly.
    const cond = await t.inject({
      url: '/api/v1/status/maintenance',
      headers: { 'if-modified-since': early.headers['last-modified'] as string },
    });
    assert.equal(cond.statusCode, 304);
  });

  it('HEAD: headers and length of GET, no body; conditional HEAD gives 304', async () => {
    const get = await t.inject(URL_);
    const head = await t.inject({ method: 'HEAD', url: URL_ });
    assert.equal(head.statusCode, 200);
    assert.equal(head.payload, '');
    assert.equal(head.headers.etag, get.headers.etag);
    assert.equal(head.headers['cache-control'], CACHE);
    assert.equal(Number(head.headers['content-length']), get.rawPayload.length);
    const cond = await t.inject({
      method: 'HEAD',
      url: URL_,
      headers: { 'if-none-match': get.headers.etag as string },
    });
    assert.equal(cond.statusCode, 304);
  });

  it('errors are never 304 and never carry the cache headers', async () => {
    for (const headers of [{ 'if-none-match': '*' }, { 'if-modified-since': 'Fri, 01 Jan 2100 00:00:00 GMT' }]) {
      const res = await t.inject({ url: '/api/v1/status/services/missing', headers });
      assert.equal(res.statusCode, 404);
      assert.equal(JSON.parse(res.payload).error.code, 'NOT_FOUND');
      assert.equal(res.headers.etag, undefined);
      assert.notEqual(res.headers['cache-control'], CACHE);
      const bad = await t.inject({ url: '/api/v1/status/uptime/2w', headers });
      assert.equal(bad.statusCode, 400);
    }
  });

  it('never compressed: the ETag names the bytes on the wire', async () => {
    for (let i = 0; i < 30; i++)
      await t.app.services.status.createComponent({
        serviceSlug: 'core',
        slug: `core-part-${i}`,
        name: `Part ${i} with a long enough name`,
      });
    const res = await t.inject({ url: '/api/v1/status/components', headers: { 'accept-encoding': 'gzip, deflate' } });
    assert.ok(res.rawPayload.length > 1024);
    assert.equal(res.headers['content-encoding'], undefined);
    assert.equal(res.headers.etag, `"${createHash('sha1').update(res.rawPayload).digest('hex')}"`);
  });

  it('every endpoint, the pages (status, incident, history) and the feed carry the same caching contract', async () => {
    const inc = await t.app.services.status.createIncident({ title: 'Cache check', impact: 'minor', message: 'm' });
    await t.app.services.status.writeDailySnapshot(new Date('2026-02-10T00:00:00Z'));
    for (const url of [
      '/api/v1/status/services',
      '/api/v1/status/services/core',
      '/api/v1/status/components?serviceSlug=core',
      '/api/v1/status/incidents?page=1&limit=5',
      `/api/v1/status/incidents/${inc.id}`,
      '/api/v1/status/maintenance',
      '/api/v1/status/snapshots/2026-02-09',
      '/api/v1/status/uptime/7d',
      '/status',
      `/status/incidents/${inc.id}`,
      '/status/history',
      '/status/history?page=1',
      '/status/feed.atom',
    ]) {
      const res = await t.inject(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['cache-control'], CACHE, url);
      assert.equal(res.headers.etag, `"${createHash('sha1').update(res.rawPayload).digest('hex')}"`, url);
      assert.ok(res.headers['last-modified'], url);
      const cond = await t.inject({ url, headers: { 'if-none-match': res.headers.etag as string } });
      assert.equal(cond.statusCode, 304, url);
    }
  });
});

describe('the status-only listener', () => {
  let t: TestApp;
  const solo = new ManualClock('2026-05-05T09:00:00.000Z');
  before(async () => {
    t = await createTestApp({ statusOnly: true, clock: solo });
    await t.app.services.status.createService({ slug: 'solo', name: 'Solo' });
  });
  after(() => t.close());

  it('serves the status API, the pages and the feed anonymously', async () => {
    const res = await t.inject('/api/v1/status/services');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      JSON.parse(res.payload).data.map((s: { slug: string }) => s.slug),
      ['solo'],
    );
    assert.equal((await t.inject('/status')).statusCode, 200);
    assert.equal((await t.inject('/status/feed.atom')).statusCode, 200);
    assert.equal((await t.inject('/status/history')).statusCode, 200);
    const incident = await t.app.services.status.createIncident({ title: 'Solo', impact: 'minor', message: 'm' });
    assert.equal((await t.inject(`/status/incidents/${incident.id}`)).statusCode, 200);
  });

  it('a burst of changes in one second: Last-Modified never after Date on the page and the API', async () => {
    solo.set('2026-05-05T10:00:00.100Z');
    const held: Record<string, string> = {};
    const dates = new Set<string>();
    for (let i = 0; i < 5; i++) {
      solo.advance(150);
      await t.app.services.status.createMaintenance({
        title: `Solo ${i}`,
        serviceSlug: 'solo',
        startsAt: '2026-06-01T00:00:00Z',
        endsAt: '2026-06-01T01:00:00Z',
      });
      for (const url of ['/status', '/api/v1/status/maintenance']) {
        const res = await t.inject(url);
        assert.equal(res.statusCode, 200, url);
        assert.equal(res.headers['last-modified'], 'Tue, 05 May 2026 10:00:00 GMT', url);
        dates.add(res.headers.date as string);
        if (i === 1) held[url] = res.headers['last-modified'] as string;
      }
    }
    assert.deepEqual([...dates], ['Tue, 05 May 2026 10:00:00 GMT']);
    solo.advance(5_000);
    for (const [url, since] of Object.entries(held)) {
      const res = await t.inject({ url, headers: { 'if-modified-since': since } });
      assert.equal(res.statusCode, 200, url);
      assert.ok(res.payload.includes('Solo 4'), url);
    }
  });

  it('serves nothing else', async () => {
    for (const [method, url] of [
      ['POST', '/api/v1/auth/login'],
      ['GET', '/api/v1/auth/me'],
      ['GET', '/api/v1/wallet/me'],
      ['GET', '/api/v1/accounts'],
    ]) {
      const res = await t.inject({ method, url, payload: method === 'POST' ? {} : undefined });
      assert.equal(res.statusCode, 404, url);
      assert.equal(JSON.parse(res.payload).error.code, 'NOT_FOUND');
    }
  });
});
