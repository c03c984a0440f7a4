import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig } from '../../src/config.js';
import { createAppContext, type AppContext } from '../../src/app.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { testEnvFor } from '../helpers/postgres.js';
import { signedInUser } from '../helpers/factories.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { MAX_STREAMS_PER_USER } from '../../src/notifications/live.js';
import { ManualClock } from '../../src/lib/clock.js';

const HEARTBEAT_ENV = { GANTRY_NOTIFICATION_HEARTBEAT_MS: '100' };

describe('notifications live stream (SSE over a listening server)', () => {
  let t: TestApp;
  let base: string;
  const open: SseClient[] = [];
  before(async () => {
    t = await createTestApp({ env: HEARTBEAT_ENV });
    await t.server.start();
    base = t.server.info.uri;
  });
  after(async () => {
    for (const c of open) c.close();
    await t.close();
  });

  async function stream(headers: Record<string, string>) {
    const client = await openSse(`${base}/api/v1/notifications/stream`, headers);
    open.push(client);
    return client;
  }
  const count = (c: SseClient, n: number) =>
    c.next((e) => e.event === 'unread-count' && JSON.parse(e.data).count === n);

  it('gantry_sse_streams_open counts the open notification streams', async () => {
    const gauge = async () => {
      const metric = await t.app.kernel.metrics.registry.getSingleMetric('gantry_sse_streams_open')?.get();
      return metric?.values.find((v) => v.labels.stream === 'notifications')?.value ?? 0;
    };
    const before = await gauge();
    const u = await signedInUser(t.app);
    const client = await openSse(`${base}/api/v1/notifications/stream`, u.headers);
    await count(client, 0);
    assert.equal(await gauge(), before + 1);
    client.close();
    const deadline = Date.now() + 3000;
    while ((await gauge()) !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await gauge(), before);
  });

  it('opens with the unread count, then pushes new notifications and count changes', async () => {
    const u = await signedInUser(t.app);
    const other = await signedInUser(t.app);
    await t.app.services.notifications.notifyNow({ userId: u.user.id, title: 'before', body: 'already there' });
    const s = await stream(u.headers);
    assert.equal(s.status, 200);
    assert.match(String(s.headers['content-type']), /^text\/event-stream/);
    assert.equal(s.headers['cache-control'], 'no-cache, no-transform');
    assert.ok(s.headers['x-request-id']);
    await count(s, 1);

    await t.app.services.notifications.notifyNow({ userId: other.user.id, title: 'not yours', body: 'x' });
    const id = await t.app.services.notifications.notifyNow({
      userId: u.user.id,
      title: 'Run finished',
      body: 'Your run is done',
      category: 'ai_run_completed',
      priority: 'high',
    });
    const pushed = await s.next((e) => e.event === 'notification');
    const data = JSON.parse(pushed.data);
    assert.equal(data.id, id);
    assert.equal(data.title, 'Run finished');
    assert.equal(data.category, 'ai_run_completed');
    assert.equal(data.status, 'unread');
    assert.ok(pushed.id);
    await count(s, 2);
    // Only the new one was pushed: neither the older one nor someone else's.
    assert.equal(s.events.filter((e) => e.event === 'notification').length, 1);

    const read = await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${id}/read`, headers: u.headers });
    assert.equal(read.statusCode, 200);
    await count(s, 1);
    await t.inject({ method: 'POST', url: '/api/v1/notifications/mark-all-read', headers: u.headers });
    await count(s, 0);
  });

  it('sends heartbeats as SSE comments', async () => {
    const u = await signedInUser(t.app);
    const s = await stream(u.headers);
    assert.equal(await s.comment(/^heartbeat$/), 'heartbeat');
    assert.ok(!s.events.some((e) => e.event === 'heartbeat'));
  });

  it('resumes after Last-Event-ID with what was missed, in order', async () => {
    const u = await signedInUser(t.app);
    const n = t.app.services.notifications;
    const first = await stream(u.headers);
    await count(first, 0);
    await n.notifyNow({ userId: u.user.id, title: 'one', body: 'b' });
    const seen = await first.next((e) => e.event === 'notification');
    first.close();
    const missed = [
      await n.notifyNow({ userId: u.user.id, title: 'two', body: 'b' }),
      await n.notifyNow({ userId: u.user.id, title: 'three', body: 'b' }),
    ];
    const resumed = await stream({ ...u.headers, 'last-event-id': seen.id! });
    await count(resumed, 3);
    assert.deepEqual(
      resumed.events.filter((e) => e.event === 'notification').map((e) => JSON.parse(e.data).id),
      missed,
    );
    // The same through the query (clients that cannot set headers).
    const viaQuery = await openSse(
      `${base}/api/v1/notifications/stream?lastEventId=${encodeURIComponent(seen.id!)}`,
      u.headers,
    );
    open.push(viaQuery);
    await count(viaQuery, 3);
    assert.deepEqual(
      viaQuery.events.filter((e) => e.event === 'notification').map((e) => JSON.parse(e.data).id),
      missed,
    );
    // A forged Last-Event-ID starts fresh instead of replaying anything.
    const forged = await stream({ ...u.headers, 'last-event-id': 'eyJzIjowfQ.AAAAAAAAAAAAAAAAAAAAAA' });
    await count(forged, 3);
    assert.equal(forged.events.filter((e) => e.event === 'notification').length, 0);
  });

  it(`keeps at most ${MAX_STREAMS_PER_USER} streams per user, closing the oldest`, async () => {
    const u = await signedInUser(t.app);
    const clients: SseClient[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_USER; i++) {
      clients.push(await stream(u.headers));
      await count(clients[i], 0);
    }
    const newest = await stream(u.headers);
    await count(newest, 0);
    const closed = await clients[0].next((e) => e.event === 'close');
    assert.deepEqual(JSON.parse(closed.data), { reason: 'superseded' });
    await clients[0].end();
    for (const c of clients.slice(1)) assert.equal(c.ended, false);
    // The survivors all still receive.
    await t.app.services.notifications.notifyNow({ userId: u.user.id, title: 'fan-out', body: 'b' });
    for (const c of [...clients.slice(1), newest]) await c.next((e) => e.event === 'notification');
  });

  it('ends the stream at the next heartbeat once the session is revoked', async () => {
    const u = await signedInUser(t.app);
    const s = await stream(u.headers);
    await count(s, 0);
    await t.app.services.identity.logout(u.user.id, u.refreshToken);
    const closed = await s.next((e) => e.event === 'close');
    assert.deepEqual(JSON.parse(closed.data), { reason: 'credentials_expired' });
    await s.end();
  });

  it('flushes each event through gzip when the client asks for it', async () => {
    const u = await signedInUser(t.app);
    const s = await stream({ ...u.headers, 'accept-encoding': 'gzip' });
    assert.equal(s.headers['content-encoding'], 'gzip');
    await count(s, 0);
    await t.app.services.notifications.notifyNow({ userId: u.user.id, title: 'zipped', body: 'b' });
    await s.next((e) => e.event === 'notification' && JSON.parse(e.data).title === 'zipped');
  });

  it('delivers notifications written by another process on the same database (change feed)', async () => {
    const u = await signedInUser(t.app);
    await t.app.kernel.changes.start(50);
    const s = await stream(u.headers);
    await count(s, 0);
    const env = await testEnvFor(t.dataDir, TEST_ENV);
    const other: AppContext = await createAppContext(resolveConfig({ dataDir: t.dataDir }, env), {
      env,
      logger: createLogger('silent'),
    });
    try {
      const id = await other.services.notifications.notifyNow({
        userId: u.user.id,
        title: 'from elsewhere',
        body: 'b',
      });
      const pushed = await s.next((e) => e.event === 'notification');
      assert.equal(JSON.parse(pushed.data).id, id);
      await count(s, 1);
    } finally {
      await other.kernel.close();
    }
  });
});

describe('notification stream and token expiry', () => {
  it('ends the stream at the first heartbeat after the access token expires', async () => {
    const clock = new ManualClock(new Date());
    const t = await createTestApp({ env: HEARTBEAT_ENV, clock });
    await t.server.start();
    try {
      const u = await signedInUser(t.app);
      const s = await openSse(`${t.server.info.uri}/api/v1/notifications/stream`, u.headers);
      await s.comment(/^heartbeat$/);
      assert.equal(s.ended, false);
      clock.advance(3601_000);
      const closed = await s.next((e) => e.event === 'close');
      assert.deepEqual(JSON.parse(closed.data), { reason: 'credentials_expired' });
      await s.end();
    } finally {
      await t.close();
    }
  });
});

describe('server.stop() with open notification streams', () => {
  it('ends every stream at once so a graceful stop does not wait out its timeout', async () => {
    const t = await createTestApp({ env: HEARTBEAT_ENV });
    await t.server.start();
    const u = await signedInUser(t.app);
    const clients = [
      await openSse(`${t.server.info.uri}/api/v1/notifications/stream`, u.headers),
      await openSse(`${t.server.info.uri}/api/v1/notifications/stream`, u.headers),
    ];
    for (const c of clients) await c.next((e) => e.event === 'unread-count');
    const started = Date.now();
    await t.server.stop({ timeout: 8000 });
    const took = Date.now() - started;
    assert.ok(took < 2000, `stop took ${took} ms`);
    for (const c of clients) {
      await c.end();
      assert.deepEqual(JSON.parse(c.events.find((e) => e.event === 'close')!.data), { reason: 'server_stopping' });
    }
    const logged = t.logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'request' && l.route === 'notifications.stream');
    assert.equal(logged.length, 2);
    await t.close();
  });
});
