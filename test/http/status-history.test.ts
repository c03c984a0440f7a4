import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/lib/clock.js';

const H = 3_600_000;
const D = 24 * H;

/**
 * The history a visitor reads (docs/status.md, Pages): past incidents of 14 days by day on
 * /status, an incident's own page, the history further back, the day figures of the bars, the
 * maintenance with its description, the feed with the brand; all of it cached like every
 * status answer.
 */
describe('the status page history, the incident page and the history pages', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00.000Z');
  let resolvedId: string;
  let activeId: string;
  let privateId: string;

  before(async () => {
    t = await createTestApp({ clock, env: { GANTRY_BRAND_NAME: 'Northwind Cloud' } });
    const s = t.app.services.status;
    await s.createService({ slug: 'api', name: 'Public API', sortOrder: 1 });
    await s.createService({ slug: 'dash', name: 'Dashboard', sortOrder: 2 });
    await s.createService({ slug: 'vault', name: 'Vault backend', isPublic: false });
    await s.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST endpoints' });
    await s.createComponent({ serviceSlug: 'api', slug: 'api-hooks', name: 'Webhooks' });
    await s.createComponent({ serviceSlug: 'dash', slug: 'dash-ui', name: 'Web UI' });
    await s.createComponent({ serviceSlug: 'vault', slug: 'vault-db', name: 'Vault DB' });
    // 28 old incidents (a month and more ago), one a day, each resolved after 30 minutes.
    for (let i = 0; i < 28; i++) {
      const old = await s.createIncident({ title: `Old incident ${i}`, impact: 'minor', message: 'Slow' });
      clock.advance(30 * 60_000);
      await s.updateIncident(old.id, { status: 'resolved', message: 'Fine' });
      clock.advance(D - 30 * 60_000);
    }
    // 2026-06-18 09:00: a platform-wide incident still being watched.
    clock.set('2026-06-18T09:00:00.000Z');
    activeId = (await s.createIncident({ title: 'Slow sign-ins', impact: 'minor', message: 'Looking' })).id;
    clock.advance(H);
    await s.updateIncident(activeId, { status: 'monitoring', message: 'A fix is out; watching' });
    // 2026-06-19: an incident of the private service only.
    clock.set('2026-06-19T10:00:00.000Z');
    privateId = (
      await s.createIncident({ title: 'Vault hiccup', impact: 'major', message: 'x', serviceSlugs: ['vault'] })
    ).id;
    // 2026-06-20 09:00-11:05: REST endpoints partly down for 2 h 5 min.
    clock.set('2026-06-20T09:00:00.000Z');
    await s.setComponentStatus('api-rest', 'partial_outage');
    resolvedId = (
      await s.createIncident({
        title: 'Elevated API errors',
        impact: 'partial',
        message: 'We are investigating <errors>',
        componentSlugs: ['api-rest'],
      })
    ).id;
    clock.set('2026-06-20T09:40:00.000Z');
    await s.updateIncident(resolvedId, { status: 'identified', message: 'A bad deploy; rolling back' });
    clock.set('2026-06-20T11:05:00.000Z');
    await s.updateIncident(resolvedId, { status: 'resolved', message: 'Rolled back' });
    await s.setComponentStatus('api-rest', 'operational');
    await s.createMaintenance({
      title: 'Database upgrade',
      serviceSlug: 'dash',
      description: 'The dashboard is read-only for up to 90 minutes.',
      startsAt: '2026-06-21T08:00:00.000Z',
      endsAt: '2026-06-21T09:30:00.000Z',
    });
    await s.createMaintenance({
      title: 'Certificate rotation',
      serviceSlug: 'api',
      startsAt: '2026-06-20T11:00:00.000Z',
      endsAt: '2026-06-20T13:00:00.000Z',
    });
    clock.set('2026-06-20T12:00:00.000Z');
  });
  after(() => t?.close());

  const sectionOf = (html: string, heading: string) => {
    const start = html.indexOf(`<h2>${heading}</h2>`);
    assert.ok(start >= 0, `no section ${heading}`);
    const next = html.indexOf('<h2>', start + 4);
    return html.slice(start, next < 0 ? undefined : next);
  };

  it('/status lists the last 14 days by day, quiet days included, with impact, last status and resolution', async () => {
    const res = await t.inject('/status');
    assert.equal(res.statusCode, 200);
    const past = sectionOf(res.payload, 'Past incidents');
    const days = [...past.matchAll(/<section class="day"><h3>([^<]+)<\/h3>/g)].map((m) => m[1]);
    assert.equal(days.length, 14);
    assert.equal(days[0], '20 Jun 2026');
    assert.equal(days[13], '7 Jun 2026');
    const day = (name: string) =>
      past.slice(past.indexOf(`<h3>${name}</h3>`), past.indexOf('</section>', past.indexOf(`<h3>${name}</h3>`)));
    assert.match(day('20 Jun 2026'), new RegExp(`<a href="/status/incidents/${resolvedId}">Elevated API errors</a>`));
    assert.match(day('20 Jun 2026'), /<span class="st major">Partial outage<\/span>/);
    assert.match(
      day('20 Jun 2026'),
      /Resolved <time datetime="2026-06-20T11:05:00.000Z">20 Jun 2026, 11:05 UTC<\/time> · lasted 2 h 5 min/,
    );
    assert.match(day('18 Jun 2026'), /Slow sign-ins/);
    assert.match(day('18 Jun 2026'), /Monitoring · ongoing for 2 d 3 h/);
    assert.match(day('19 Jun 2026'), /No incidents reported\./, 'the private incident is not listed');
    assert.match(day('10 Jun 2026'), /No incidents reported\./);
    assert.doesNotMatch(res.payload, /Vault hiccup/);
    assert.doesNotMatch(past, /Old incident/, 'May is before the 14 days');
    assert.match(res.payload, /<a href="\/status\/history">Incident history<\/a>/);
    assert.match(res.payload, /<h1>Northwind Cloud status<\/h1>/);
  });

  it('an active incident shows every update, capitalised, what it affects and a link to its page', async () => {
    const res = await t.inject('/status');
    const active = sectionOf(res.payload, 'Active incidents');
    assert.match(active, new RegExp(`<a href="/status/incidents/${activeId}">Slow sign-ins</a>`));
    assert.match(active, /Affects: All services/);
    const updates = [...active.matchAll(/<li><p><strong>([^<]+)<\/strong> - ([^<]+)<\/p>/g)].map(
      (m) => `${m[1]}: ${m[2]}`,
    );
    assert.deepEqual(updates, ['Monitoring: A fix is out; watching', 'Investigating: Looking']);
    assert.doesNotMatch(active, /Elevated API errors/, 'resolved incidents are not active');
  });

  it('maintenance: in progress apart from scheduled, with its description, window and length', async () => {
    const res = await t.inject('/status');
    const doing = sectionOf(res.payload, 'Maintenance in progress');
    assert.match(doing, /Certificate rotation/);
    assert.match(doing, /<span class="st maintenance">In progress<\/span>/);
    const planned = sectionOf(res.payload, 'Scheduled maintenance');
    assert.match(planned, /Database upgrade/);
    assert.match(planned, /<p>The dashboard is read-only for up to 90 minutes\.<\/p>/);
    assert.match(
      planned,
      /Dashboard: <time datetime="2026-06-21T08:00:00.000Z">21 Jun 2026, 08:00 UTC<\/time> to <time[^>]*>21 Jun 2026, 09:30 UTC<\/time> \(1 h 30 min\)/,
    );
  });

  it("each bar's days are in a table a keyboard and a screen reader reach: figures, incidents linked, alike days merged", async () => {
    const res = await t.inject('/status');
    const api = res.payload.slice(res.payload.indexOf('data-slug="api"'), res.payload.indexOf('data-slug="dash"'));
    assert.match(api, /<div class="bar" role="img" aria-label="Uptime over the last 90 days: \d+\.\d{2}%">/);
    assert.match(api, /<details class="days"><summary>Daily figures: Public API<\/summary>/);
    const rows = [...api.matchAll(/<tr><th scope="row">([^<]+)<\/th><td>([^<]+)<\/td><td>(.*?)<\/td><\/tr>/g)].map(
      (m) => [m[1], m[2], m[3]],
    );
    // Newest first: today with its incident (about 2 h at 30% of 12 h so far), then the
    // earlier days of 100%, merged, then the days before the service existed.
    assert.equal(rows[0][0], '20 Jun 2026');
    assert.match(rows[0][1], /^9\d\.\d{2}%$/);
    assert.equal(rows[0][2], `<a href="/status/incidents/${resolvedId}">Elevated API errors</a>`);
    assert.deepEqual(rows[1], ['1 May 2026 to 19 Jun 2026', '100.00%', 'None']);
    assert.deepEqual(rows[2], ['23 Mar 2026 to 30 Apr 2026', 'No data', 'None']);
    assert.equal(rows.length, 3);
    // 2 h 5 min at 30% (a partial outage) of the 12 hours so far: 94.79%, below 95%.
    assert.equal(rows[0][1], '94.79%');
    assert.match(api, /<span class="critical" title="2026-06-20: 94\.79%, 1 incident"><\/span>/);
  });

  it("an incident's page: the whole timeline, what it affected, the duration; cached with validators", async () => {
    const res = await t.inject(`/status/incidents/${resolvedId}`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'public, max-age=30, stale-while-revalidate=300');
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    assert.match(res.payload, /<title>Elevated API errors · Northwind Cloud<\/title>/);
    assert.match(res.payload, /<dt>Affected<\/dt><dd>Public API \(REST endpoints\)<\/dd>/);
    assert.match(
      res.payload,
      /<dt>Started<\/dt><dd><time datetime="2026-06-20T09:00:00.000Z">20 Jun 2026, 09:00 UTC<\/time><\/dd>/,
    );
    assert.match(res.payload, /<dt>Resolved<\/dt><dd><time datetime="2026-06-20T11:05:00.000Z">/);
    assert.match(res.payload, /<dt>Duration<\/dt><dd>2 h 5 min<\/dd>/);
    const updates = [
      ...res.payload.matchAll(
        /<li><p><strong>([^<]+)<\/strong> - ([^<]+)<\/p><p class="muted"><time datetime="([^"]+)"/g,
      ),
    ].map((m) => [m[1], m[2], m[3]]);
    assert.deepEqual(updates, [
      ['Resolved', 'Rolled back', '2026-06-20T11:05:00.000Z'],
      ['Identified', 'A bad deploy; rolling back', '2026-06-20T09:40:00.000Z'],
      ['Investigating', 'We are investigating &lt;errors&gt;', '2026-06-20T09:00:00.000Z'],
    ]);
    const again = await t.inject({
      url: `/status/incidents/${resolvedId}`,
      headers: { 'if-none-match': String(res.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    assert.equal(again.payload, '');
    const open = await t.inject(`/status/incidents/${activeId.toUpperCase()}`);
    assert.match(open.payload, /<dt>Duration<\/dt><dd>Ongoing for 2 d 3 h<\/dd>/);
    assert.doesNotMatch(open.payload, /<dt>Resolved<\/dt>/);
  });

  it('an unknown, malformed or private incident is a 404 page, never cached', async () => {
    for (const id of [randomUUID(), 'not-an-id', privateId]) {
      const res = await t.inject(`/status/incidents/${id}`);
      assert.equal(res.statusCode, 404, id);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(res.payload, /<h1>Page not found<\/h1>/);
      assert.equal(res.headers.etag, undefined);
      assert.doesNotMatch(String(res.headers['cache-control']), /public/);
    }
  });

  it('/status/history pages back through every public incident, 25 a page, by day', async () => {
    const first = await t.inject('/status/history');
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['cache-control'], 'public, max-age=30, stale-while-revalidate=300');
    const titles = (html: string) =>
      [...html.matchAll(/<a href="\/status\/incidents\/[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]);
    const page1 = titles(first.payload);
    assert.equal(page1.length, 25);
    assert.deepEqual(page1.slice(0, 3), ['Elevated API errors', 'Slow sign-ins', 'Old incident 27']);
    assert.match(first.payload, /<section class="day"><h2>20 Jun 2026<\/h2>/);
    assert.match(
      first.payload,
      /<a class="btn btn-secondary" rel="next" href="\/status\/history\?page=2">Older incidents<\/a>/,
    );
    assert.doesNotMatch(first.payload, /rel="prev"/);
    const second = await t.inject('/status/history?page=2');
    const page2 = titles(second.payload);
    assert.deepEqual(page2, ['Old incident 4', 'Old incident 3', 'Old incident 2', 'Old incident 1', 'Old incident 0']);
    assert.match(second.payload, /<h1>Incident history, page 2 of 2<\/h1>/);
    assert.match(second.payload, /rel="prev" href="\/status\/history\?page=1">Newer incidents/);
    assert.doesNotMatch(second.payload, /Vault hiccup/);
    assert.equal((await t.inject('/status/history?page=3')).statusCode, 404);
    for (const bad of ['0', 'x', '-1']) {
      const res = await t.inject(`/status/history?page=${bad}`);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    }
  });

  it('the feed carries the brand and links entries to their pages', async () => {
    const res = await t.inject('/status/feed.atom');
    assert.match(res.payload, /<title>Northwind Cloud status: incidents<\/title>/);
    assert.match(res.payload, /<author><name>Northwind Cloud<\/name><\/author>/);
    assert.match(
      res.payload,
      new RegExp(
        `<link rel="alternate" type="text/html" href="http://127.0.0.1:8080/status/incidents/${resolvedId}"/>`,
      ),
    );
    assert.doesNotMatch(res.payload, /Vault hiccup/);
  });
});
