import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/lib/clock.js';

const H = 3_600_000;
const SERVICE_KEYS = [
  'id',
  'slug',
  'name',
  'description',
  'current_status',
  'indicator',
  'sort_order',
  'is_public',
  'created_at',
  'updated_at',
];
const COMPONENT_KEYS = ['id', 'slug', 'name', 'current_status', 'indicator', 'service_id'];
const INCIDENT_KEYS = [
  'id',
  'slug',
  'title',
  'status',
  'impact',
  'severity',
  'description',
  'started_at',
  'resolved_at',
  'updates',
];
const UPDATE_KEYS = ['id', 'status', 'message', 'author_name', 'created_at'];
const MAINTENANCE_KEYS = ['id', 'slug', 'title', 'status', 'starts_at', 'ends_at', 'service_id'];

interface Body<T = any> {
  data: T;
  meta: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
}

async function get<T = any>(
  t: TestApp,
  url: string,
): Promise<{ status: number; body: Body<T>; headers: Record<string, unknown> }> {
  const res = await t.inject(url);
  return { status: res.statusCode, body: JSON.parse(res.payload) as Body<T>, headers: res.headers };
}

describe('public status service: endpoints and shapes', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-03-01T00:00:00.000Z');
  let incidentId: string;

  before(async () => {
    t = await createTestApp({ clock });
    const s = t.app.services.status;
    await s.createService({ slug: 'web', name: 'Web', description: 'Site', sortOrder: 2 });
    await s.createService({ slug: 'api', name: 'API', sortOrder: 1 });
    await s.createService({ slug: 'internal', name: 'Internal', sortOrder: 0, isPublic: false });
    await s.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST' });
    await s.createComponent({ serviceSlug: 'api', slug: 'api-graphql', name: 'GraphQL' });
    await s.createComponent({ serviceSlug: 'web', slug: 'web-app', name: 'App' });
    await s.createComponent({ serviceSlug: 'internal', slug: 'internal-db', name: 'DB' });
    clock.advance(10 * H);
    await s.setComponentStatus('api-graphql', 'partial_outage');
    await s.setComponentStatus('internal-db', 'major_outage');
    const incident = await s.createIncident({
      title: 'GraphQL errors',
      impact: 'minor',
      status: 'investigating',
      message: 'We are looking',
      serviceSlugs: ['api'],
      authorName: 'Ops',
    });
    incidentId = incident.id;
    clock.advance(H);
    await s.updateIncident(incident.id, { status: 'identified', message: 'Found it', authorName: 'Ops' });
    await s.createIncident({ title: 'Internal only', impact: 'major', message: 'hidden', serviceSlugs: ['internal'] });
    await s.createMaintenance({
      title: 'Upgrade',
      serviceSlug: 'web',
      startsAt: '2026-03-05T00:00:00Z',
      endsAt: '2026-03-05T02:00:00Z',
    });
    await s.createMaintenance({
      title: 'Internal upgrade',
      serviceSlug: 'internal',
      startsAt: '2026-03-05T00:00:00Z',
      endsAt: '2026-03-05T02:00:00Z',
    });
  });
  after(() => t.close());

  it('GET /status: the platform summary', async () => {
    const { status, body } = await get(t, '/api/v1/status');
    assert.equal(status, 200);
    assert.equal(body.error, null);
    assert.equal(body.meta, null);
    assert.deepEqual(Object.keys(body.data), [
      'headline',
      'status',
      'indicator',
      'services',
      'incidents',
      'maintenance',
      'updated_at',
    ]);
    assert.equal(body.data.status, 'partial_outage');
    assert.equal(body.data.indicator, 'major');
    assert.equal(body.data.headline, 'Partial System Outage');
    assert.deepEqual(
      body.data.services.map((s: any) => s.slug),
      ['api', 'web'],
    );
    assert.deepEqual(
      body.data.incidents.map((i: any) => i.title),
      ['GraphQL errors'],
    );
    assert.deepEqual(
      body.data.maintenance.map((m: any) => m.title),
      ['Upgrade'],
    );
    assert.equal(body.data.updated_at, '2026-03-01T11:00:00.000Z');
  });

  it('GET /status/services: public services by sort_order, exact shape', async () => {
    const { body } = await get(t, '/api/v1/status/services');
    assert.deepEqual(
      body.data.map((s: any) => s.slug),
      ['api', 'web'],
    );
    for (const s of body.data) assert.deepEqual(Object.keys(s), SERVICE_KEYS);
    assert.deepEqual(
      body.data.map((s: any) => [s.current_status, s.indicator, s.is_public, s.sort_order]),
      [
        ['partial_outage', 'major', true, 1],
        ['operational', 'none', true, 2],
      ],
    );
  });

  it('GET /status/services/:slug: detail with components, incidents, maintenance, uptime', async () => {
    const { body } = await get(t, '/api/v1/status/services/api');
    assert.deepEqual(Object.keys(body.data), [
      'id',
      'slug',
      'name',
      'description',
      'current_status',
      'indicator',
      'components',
      'incidents',
      'maintenance',
      'uptime',
    ]);
    assert.deepEqual(
      body.data.components.map((c: any) => Object.keys(c)),
      [
        ['id', 'slug', 'name', 'current_status'],
        ['id', 'slug', 'name', 'current_status'],
      ],
    );
    assert.deepEqual(Object.keys(body.data.uptime), ['24h', '7d', '30d', '90d', '1y']);
    // GraphQL: partial for 1 h of an 11 h life -> 1 - 0.3/11.
    const expected = Math.round((1 - 0.3 / 11) * 1_000_000) / 10_000;
    assert.deepEqual(Object.values(body.data.uptime), [expected, expected, expected, expected, expected]);
    assert.equal(body.data.incidents[0].id, incidentId);
    const web = await get(t, '/api/v1/status/services/web');
    assert.equal(web.body.data.maintenance[0].title, 'Upgrade');
    assert.deepEqual(Object.keys(web.body.data.maintenance[0]), MAINTENANCE_KEYS);
  });

  it('unknown and private service slugs are 404 in the envelope', async () => {
    for (const slug of ['nope', 'internal']) {
      const { status, body } = await get(t, `/api/v1/status/services/${slug}`);
      assert.equal(status, 404);
      assert.equal(body.error?.code, 'NOT_FOUND');
      assert.equal(body.data, null);
    }
  });

  it('GET /status/components, and the serviceSlug filter', async () => {
    const all = await get(t, '/api/v1/status/components');
    assert.deepEqual(
      all.body.data.map((c: any) => c.slug),
      ['api-graphql', 'api-rest', 'web-app'],
    );
    for (const c of all.body.data) assert.deepEqual(Object.keys(c), COMPONENT_KEYS);
    assert.deepEqual(
      all.body.data.map((c: any) => c.indicator),
      ['major', 'none', 'none'],
    );
    const api = await get(t, '/api/v1/status/components?serviceSlug=web');
    assert.deepEqual(
      api.body.data.map((c: any) => c.slug),
      ['web-app'],
    );
    const services = await get(t, '/api/v1/status/services');
    assert.equal(api.body.data[0].service_id, services.body.data[1].id);
    assert.equal((await get(t, '/api/v1/status/components?serviceSlug=internal')).status, 404);
    assert.equal((await get(t, '/api/v1/status/components?serviceSlug=nope')).status, 404);
  });

  it('GET /status/incidents: public only, with meta page/limit/total', async () => {
    const { body } = await get(t, '/api/v1/status/incidents');
    assert.deepEqual(body.meta, { page: 1, limit: 20, total: 1 });
    assert.deepEqual(Object.keys(body.data[0]), INCIDENT_KEYS);
    assert.equal(body.data[0].severity, null);
    assert.deepEqual(Object.keys(body.data[0].updates[0]), UPDATE_KEYS);
  });

  it('GET /status/incidents/:id: the full timeline, newest first', async () => {
    const { body } = await get(t, `/api/v1/status/incidents/${incidentId}`);
    assert.equal(body.data.status, 'identified');
    assert.deepEqual(
      body.data.updates.map((u: any) => [u.status, u.message, u.author_name]),
      [
        ['identified', 'Found it', 'Ops'],
        ['investigating', 'We are looking', 'Ops'],
      ],
    );
    const missing = await get(t, '/api/v1/status/incidents/00000000-0000-4000-8000-000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error?.code, 'NOT_FOUND');
    const malformed = await get(t, '/api/v1/status/incidents/not-a-uuid');
    assert.equal(malformed.status, 422);
    assert.equal(malformed.body.error?.code, 'VALIDATION_FAILED');
  });

  it('a private incident is not found by id either', async () => {
    const all = await t.app.services.status.listIncidents();
    const hidden = all.find((i) => i.title === 'Internal only')!;
    assert.equal((await get(t, `/api/v1/status/incidents/${hidden.id}`)).status, 404);
  });

  it('GET /status/maintenance: upcoming and active of public services', async () => {
    const { body } = await get(t, '/api/v1/status/maintenance');
    assert.deepEqual(
      body.data.map((m: any) => [m.title, m.status]),
      [['Upgrade', 'scheduled']],
    );
    assert.deepEqual(Object.keys(body.data[0]), MAINTENANCE_KEYS);
  });

  it('GET /status/uptime/:window for the five windows only', async () => {
    for (const w of ['24h', '7d', '30d', '90d', '1y']) {
      const { status, body } = await get(t, `/api/v1/status/uptime/${w}`);
      assert.equal(status, 200);
      assert.equal(body.data.window, w);
      assert.deepEqual(Object.keys(body.data), [
        'scope_type',
        'scope_key',
        'window',
        'uptime_percent',
        'downtime_minutes',
        'incident_count',
        'computed_at',
      ]);
      assert.equal(body.data.scope_type, 'platform');
      assert.equal(body.data.scope_key, 'all');
      assert.equal(body.data.incident_count, 1);
      assert.equal(body.data.downtime_minutes, 18); // 1 h partial x 0.3
      assert.ok(body.data.uptime_percent < 100 && body.data.uptime_percent > 0, String(body.data.uptime_percent));
      assert.ok(!Number.isNaN(Date.parse(body.data.computed_at)));
    }
    for (const w of ['2d', '1h', 'all']) {
      const { status, body } = await get(t, `/api/v1/status/uptime/${w}`);
      assert.equal(status, 400);
      assert.equal(body.error?.code, 'VALIDATION_FAILED');
    }
  });

  it('GET /status/snapshots/:date: 404 when none, 400 when malformed, the row once written', async () => {
    assert.equal((await get(t, '/api/v1/status/snapshots/2026-03-01')).status, 404);
    for (const bad of ['2026-3-1', '2026-02-30', 'today', '20260301']) {
      const r = await get(t, `/api/v1/status/snapshots/${bad}`);
      assert.equal(r.status, 400, bad);
      assert.equal(r.body.error?.code, 'VALIDATION_FAILED');
    }
    await t.app.services.status.writeDailySnapshot(new Date('2026-03-02T00:00:00.000Z'));
    const { status, body } = await get(t, '/api/v1/status/snapshots/2026-03-01');
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body.data), ['snapshot_date', 'scope_type', 'scope_key', 'payload', 'computed_at']);
    assert.equal(body.data.snapshot_date, '2026-03-01');
    assert.equal(body.data.payload.headline, 'Partial System Outage');
    assert.equal(body.data.payload.status, 'partial_outage');
    assert.deepEqual(
      body.data.payload.services.map((s: any) => s.slug),
      ['api', 'web'],
    );
  });

  it('is anonymous: no token needed, and a bad token is not even looked at', async () => {
    const res = await t.inject({ url: '/api/v1/status', headers: { authorization: 'Bearer nonsense' } });
    assert.equal(res.statusCode, 200);
  });
});

describe('public status service: rollups', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-04-01T00:00:00.000Z');
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());
  const summary = async () => (await get(t, '/api/v1/status')).body.data;
  const service = async (slug: string) => (await get(t, `/api/v1/status/services/${slug}`)).body.data;

  it('no services: all systems operational', async () => {
    assert.deepEqual(
      [(await summary()).headline, (await summary()).status, (await summary()).indicator],
      ['All Systems Operational', 'operational', 'none'],
    );
  });

  it('a service is the worst of its components; the platform the worst of its services', async () => {
    const s = t.app.services.status;
    await s.createService({ slug: 'a', name: 'A' });
    await s.createService({ slug: 'b', name: 'B' });
    await s.createComponent({ serviceSlug: 'a', slug: 'a1', name: 'A1' });
    await s.createComponent({ serviceSlug: 'a', slug: 'a2', name: 'A2' });
    await s.createComponent({ serviceSlug: 'b', slug: 'b1', name: 'B1' });
    await s.setComponentStatus('a1', 'degraded_performance');
    assert.equal((await service('a')).current_status, 'degraded_performance');
    assert.equal((await summary()).headline, 'Partially Degraded Service');
    await s.setComponentStatus('a2', 'maintenance');
    assert.equal((await service('a')).current_status, 'degraded_performance');
    await s.setComponentStatus('b1', 'major_outage');
    const sum = await summary();
    assert.deepEqual([sum.status, sum.indicator, sum.headline], ['major_outage', 'critical', 'Major System Outage']);
    await s.setComponentStatus('b1', 'maintenance');
    await s.setComponentStatus('a1', 'operational');
    assert.deepEqual(
      [(await summary()).status, (await summary()).headline, (await summary()).indicator],
      ['maintenance', 'Service Under Maintenance', 'maintenance'],
    );
    await s.setComponentStatus('a2', 'operational');
    await s.setComponentStatus('b1', 'operational');
  });

  it('an active incident raises its services by its impact until resolved', async () => {
    const s = t.app.services.status;
    const inc = await s.createIncident({ title: 'Slow', impact: 'partial', message: 'm', serviceSlugs: ['a'] });
    assert.equal((await service('a')).current_status, 'partial_outage');
    assert.equal((await service('b')).current_status, 'operational');
    assert.equal((await summary()).headline, 'Partial System Outage');
    await s.updateIncident(inc.id, { status: 'monitoring', message: 'm', impact: 'minor' });
    assert.equal((await service('a')).current_status, 'degraded_performance');
    await s.updateIncident(inc.id, { status: 'resolved', message: 'done' });
    assert.equal((await service('a')).current_status, 'operational');
    assert.deepEqual((await summary()).incidents, []);
  });

  it("an incident on a component raises that component's service; one on nothing raises the platform", async () => {
    const s = t.app.services.status;
    const onComponent = await s.createIncident({
      title: 'B1 down',
      impact: 'major',
      message: 'm',
      componentSlugs: ['b1'],
    });
    assert.equal((await service('b')).current_status, 'major_outage');
    await s.updateIncident(onComponent.id, { status: 'resolved', message: 'ok' });
    const platform = await s.createIncident({ title: 'Everything slow', impact: 'minor', message: 'm' });
    const sum = await summary();
    assert.equal(sum.status, 'degraded_performance');
    assert.deepEqual(
      sum.services.map((x: any) => x.current_status),
      ['operational', 'operational'],
    );
    await s.updateIncident(platform.id, { status: 'resolved', message: 'ok' });
    assert.equal((await summary()).status, 'operational');
  });

  it('an in-progress maintenance window shows its service under maintenance', async () => {
    const s = t.app.services.status;
    const now = clock.now().getTime();
    const m = await s.createMaintenance({
      title: 'Now',
      serviceSlug: 'b',
      startsAt: new Date(now - H).toISOString(),
      endsAt: new Date(now + H).toISOString(),
    });
    assert.equal(m.status, 'in_progress');
    assert.equal((await service('b')).current_status, 'maintenance');
    await s.setComponentStatus('b1', 'partial_outage');
    assert.equal((await service('b')).current_status, 'partial_outage');
    await s.setComponentStatus('b1', 'operational');
    await s.updateMaintenance(m.id, { status: 'completed' });
    assert.equal((await service('b')).current_status, 'operational');
  });

  it('a service made private disappears everywhere', async () => {
    const s = t.app.services.status;
    await s.updateService('b', { isPublic: false });
    assert.deepEqual(
      (await summary()).services.map((x: any) => x.slug),
      ['a'],
    );
    assert.equal((await get(t, '/api/v1/status/services/b')).status, 404);
    assert.deepEqual(
      (await get(t, '/api/v1/status/components')).body.data.map((c: any) => c.slug),
      ['a1', 'a2'],
    );
    await s.updateService('b', { isPublic: true });
  });
});

describe('public status service: incident paging', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00.000Z');
  before(async () => {
    t = await createTestApp({ clock });
    for (let i = 1; i <= 25; i++) {
      clock.advance(60_000);
      await t.app.services.status.createIncident({ title: `Incident ${i}`, impact: 'minor', message: 'm' });
    }
  });
  after(() => t.close());

  it('newest first, default 20, then the rest', async () => {
    const first = await get(t, '/api/v1/status/incidents');
    assert.equal(first.body.data.length, 20);
    assert.equal(first.body.data[0].title, 'Incident 25');
    assert.deepEqual(first.body.meta, { page: 1, limit: 20, total: 25 });
    const second = await get(t, '/api/v1/status/incidents?page=2');
    assert.deepEqual(
      second.body.data.map((i: any) => i.title),
      ['Incident 5', 'Incident 4', 'Incident 3', 'Incident 2', 'Incident 1'],
    );
    const small = await get(t, '/api/v1/status/incidents?page=3&limit=10');
    assert.deepEqual(small.body.meta, { page: 3, limit: 10, total: 25 });
    assert.equal(small.body.data.length, 5);
    const past = await get(t, '/api/v1/status/incidents?page=9');
    assert.deepEqual(past.body.data, []);
    assert.equal((await get(t, '/api/v1/status/incidents?limit=100')).body.data.length, 25);
  });

  it('limit above 100, zero or a bad page is a 400, never clamped', async () => {
    for (const q of ['limit=101', 'limit=0', 'page=0', 'page=x']) {
      const r = await get(t, `/api/v1/status/incidents?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error?.code, 'VALIDATION_FAILED');
    }
  });
});

describe('the status page and the Atom feed', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-06-01T00:00:00.000Z');
  let incidentId: string;
  before(async () => {
    t = await createTestApp({ clock });
    const s = t.app.services.status;
    await s.createService({ slug: 'mail', name: 'Mail <relay>' });
    await s.createComponent({ serviceSlug: 'mail', slug: 'mail-smtp', name: 'SMTP' });
    clock.advance(H);
    const inc = await s.createIncident({
      title: 'Mail <script>alert(1)</script> delayed',
      impact: 'minor',
      message: 'Queue & backlog',
      serviceSlugs: ['mail'],
    });
    incidentId = inc.id;
    clock.advance(H);
    await s.updateIncident(inc.id, { status: 'resolved', message: 'Drained "all" queues' });
    await s.createIncident({ title: 'Second', impact: 'major', message: 'Down' });
  });
  after(() => t.close());

  it('GET /status is HTML for phones, escaped, with the feed linked', async () => {
    const res = await t.inject('/status');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(res.payload, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.match(res.payload, /Major System Outage/);
    assert.match(res.payload, /Mail &lt;relay&gt;/);
    assert.doesNotMatch(res.payload, /<script>/);
    assert.match(res.payload, /href="http:\/\/127\.0\.0\.1:8080\/status\/feed\.atom"/);
    assert.equal((res.payload.match(/<span class="(none|minor|major|critical|nodata)" title=/g) ?? []).length, 90);
  });

  it('GET /status/feed.atom lists incidents newest first, each linking to its own page, with the brand', async () => {
    const res = await t.inject('/status/feed.atom');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/atom+xml; charset=utf-8');
    assert.match(
      res.payload,
      /^<\?xml version="1.0" encoding="utf-8"\?>\n<feed xmlns="http:\/\/www.w3.org\/2005\/Atom">/,
    );
    assert.match(res.payload, /<title>Gantry status: incidents<\/title>/);
    assert.match(res.payload, /<author><name>Gantry<\/name><\/author>/);
    const entries = res.payload.split('<entry>').slice(1);
    assert.equal(entries.length, 2);
    // Plain titles; the status is a category with its label, never a raw value in the title.
    assert.match(entries[0], /<title>Second<\/title>/);
    assert.match(entries[0], /<category term="investigating" label="Investigating"\/>/);
    assert.match(entries[0], /<summary>Investigating - Down<\/summary>/);
    assert.match(entries[1], new RegExp(`<id>urn:uuid:${incidentId}</id>`));
    assert.match(
      entries[1],
      new RegExp(
        `<link rel="alternate" type="text/html" href="http://127.0.0.1:8080/status/incidents/${incidentId}"/>`,
      ),
    );
    assert.match(entries[1], /<title>Mail &lt;script&gt;alert\(1\)&lt;\/script&gt; delayed<\/title>/);
    assert.match(entries[1], /<category term="resolved" label="Resolved"\/>/);
    assert.match(entries[1], /<updated>2026-06-01T02:00:00.000Z<\/updated>/);
    assert.match(entries[1], /Drained &amp;quot;all&amp;quot; queues/);
    assert.match(entries[1], /Queue &amp;amp; backlog/);
    assert.match(entries[1], /&lt;strong&gt;Resolved&lt;\/strong&gt;/);
    assert.match(entries[1], /1 Jun 2026, 02:00 UTC/);
    assert.match(
      res.payload,
      /<link rel="self" type="application\/atom\+xml" href="http:\/\/127.0.0.1:8080\/status\/feed.atom"\/>/,
    );
  });
});
