import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signedInUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { NOTIFICATIONS_TOPIC, type NewNotification } from '../../src/notifications/service.js';
import type { PresentedNotification } from '../../src/notifications/presenters.js';

interface Body<T = unknown> {
  data: T;
  meta: Record<string, unknown>;
  error: { code: string; message: string; details?: unknown } | null;
}

const NOTIFICATION_KEYS = [
  'actionUrl',
  'body',
  'category',
  'createdAt',
  'expiresAt',
  'icon',
  'id',
  'priority',
  'readAt',
  'status',
  'title',
];

describe('notifications API', () => {
  const clock = new ManualClock('2026-03-01T10:00:00.000Z');
  let t: TestApp;
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  const body = <T>(res: { result?: unknown; payload: string }) => JSON.parse(res.payload) as Body<T>;
  async function seed(userId: string, n: number, extra: Partial<NewNotification> = {}) {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(
        await t.app.services.notifications.notifyNow({ userId, title: `Title ${i}`, body: `Body ${i}`, ...extra }),
      );
      clock.advance(1000);
    }
    return ids;
  }
  const get = (url: string, headers: Record<string, string>) => t.inject({ method: 'GET', url, headers });
  const row = (id: string) =>
    t.app.kernel.db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('lists newest first in the documented shape, offset style with meta total/limit/offset', async () => {
    const u = await signedInUser(t.app);
    const ids = await seed(u.user.id, 3, {
      category: 'productivity',
      priority: 'high',
      icon: 'bell',
      actionUrl: '/runs/1',
    });
    const res = await get('/api/v1/notifications', u.headers);
    assert.equal(res.statusCode, 200);
    const b = body<PresentedNotification[]>(res);
    assert.deepEqual(
      b.data.map((n) => n.id),
      [...ids].reverse(),
    );
    assert.deepEqual(Object.keys(b.data[0]).sort(), NOTIFICATION_KEYS);
    assert.deepEqual(
      { ...b.data[2], createdAt: undefined },
      {
        id: ids[0],
        title: 'Title 0',
        body: 'Body 0',
        icon: 'bell',
        actionUrl: '/runs/1',
        category: 'productivity',
        priority: 'high',
        status: 'unread',
        readAt: null,
        expiresAt: null,
        createdAt: undefined,
      },
    );
    assert.equal(b.meta.total, 3);
    assert.equal(b.meta.limit, 20);
    assert.equal(b.meta.offset, 0);
    assert.equal(b.meta.hasNextPage, false);
    assert.equal(b.meta.nextCursor, null);
    assert.equal(res.headers['x-ratelimit-limit'], '60');
  });

  it('only ever shows the caller their own notifications', async () => {
    const a = await signedInUser(t.app);
    const b = await signedInUser(t.app);
    await seed(a.user.id, 2);
    const theirs = await seed(b.user.id, 1);
    const res = body<PresentedNotification[]>(await get('/api/v1/notifications', a.headers));
    assert.equal(res.data.length, 2);
    assert.ok(!res.data.some((n) => n.id === theirs[0]));
  });

  it('pages the same data in both styles, and keyset pages stay stable under inserts', async () => {
    const u = await signedInUser(t.app);
    const ids = (await seed(u.user.id, 7)).reverse(); // newest first
    const offsetPages: string[][] = [];
    for (let offset = 0; offset < 7; offset += 3) {
      const b = body<PresentedNotification[]>(await get(`/api/v1/notifications?limit=3&offset=${offset}`, u.headers));
      assert.equal(b.meta.total, 7);
      assert.equal(b.meta.hasNextPage, offset + 3 < 7);
      offsetPages.push(b.data.map((n) => n.id));
    }
    assert.deepEqual(offsetPages.flat(), ids);

    const first = body<PresentedNotification[]>(await get('/api/v1/notifications?limit=3&paging=cursor', u.headers));
    assert.deepEqual(Object.keys(first.meta).sort(), ['durationMs', 'hasNextPage', 'limit', 'nextCursor', 'requestId']);
    assert.deepEqual(
      first.data.map((n) => n.id),
      ids.slice(0, 3),
    );
    // Inserts after the first page do not shift what the cursor continues with.
    await seed(u.user.id, 2);
    const cursorIds = [...first.data.map((n) => n.id)];
    let cursor = first.meta.nextCursor as string | null;
    while (cursor) {
      const b = body<PresentedNotification[]>(
        await get(`/api/v1/notifications?limit=3&cursor=${encodeURIComponent(cursor)}`, u.headers),
      );
      assert.equal(b.meta.limit, 3);
      assert.equal(b.meta.total, undefined);
      cursorIds.push(...b.data.map((n) => n.id));
      cursor = b.meta.nextCursor as string | null;
      assert.equal(b.meta.hasNextPage, cursor !== null);
    }
    assert.deepEqual(cursorIds, ids);

    // An offset first page already carries the cursor that continues it.
    const offsetFirst = body<PresentedNotification[]>(await get('/api/v1/notifications?limit=4', u.headers));
    const next = body<PresentedNotification[]>(
      await get(
        `/api/v1/notifications?limit=4&cursor=${encodeURIComponent(offsetFirst.meta.nextCursor as string)}`,
        u.headers,
      ),
    );
    assert.deepEqual(
      next.data.map((n) => n.id),
      ids.slice(2, 6),
    );
  });

  it('defaults a cursor page to 25 and refuses forged, foreign and mixed paging with 400', async () => {
    const u = await signedInUser(t.app);
    const other = await signedInUser(t.app);
    await seed(u.user.id, 27);
    await seed(other.user.id, 2);
    const first = body<PresentedNotification[]>(await get('/api/v1/notifications?paging=cursor', u.headers));
    assert.equal(first.data.length, 25);
    assert.equal(first.meta.limit, 25);
    const cursor = first.meta.nextCursor as string;

    const forged = `${Buffer.from(JSON.stringify({ s: 1 })).toString('base64url')}.${cursor.split('.')[1]}`;
    for (const bad of [forged, 'garbage', `${cursor}x`]) {
      const res = await get(`/api/v1/notifications?cursor=${encodeURIComponent(bad)}`, u.headers);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(body(res).error?.code, 'VALIDATION_FAILED');
    }
    // Bound to the user: someone else's valid cursor is refused too.
    const foreign = await get(`/api/v1/notifications?cursor=${encodeURIComponent(cursor)}`, other.headers);
    assert.equal(foreign.statusCode, 400);
    // And to the filter it was made under.
    const refiltered = await get(`/api/v1/notifications?status=unread&cursor=${encodeURIComponent(cursor)}`, u.headers);
    assert.equal(refiltered.statusCode, 400);
    const mixed = await get(`/api/v1/notifications?offset=0&cursor=${encodeURIComponent(cursor)}`, u.headers);
    assert.equal(mixed.statusCode, 400);
  });

  it('refuses an out-of-range limit or offset with 400, never clamping', async () => {
    const u = await signedInUser(t.app);
    for (const query of [
      'limit=0',
      'limit=51',
      'limit=abc',
      'offset=-1',
      'status=deleted',
      'paging=sideways',
      'category=Not%20A%20Category',
    ]) {
      const res = await get(`/api/v1/notifications?${query}`, u.headers);
      assert.equal(res.statusCode, 400, query);
      assert.equal(body(res).error?.code, 'VALIDATION_FAILED');
    }
    assert.equal((await get('/api/v1/notifications?limit=50', u.headers)).statusCode, 200);
  });

  it('filters by status and category; archived are excluded by default, retained, and listed with status=archived', async () => {
    const u = await signedInUser(t.app);
    const [a, b2, c] = await seed(u.user.id, 3, { category: 'system' });
    const [d] = await seed(u.user.id, 1, { category: 'ai_run_completed' });
    await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${a}/archive`, headers: u.headers });
    await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${b2}/read`, headers: u.headers });
    const ids = async (query: string) =>
      body<PresentedNotification[]>(await get(`/api/v1/notifications${query}`, u.headers));

    const all = await ids('');
    assert.deepEqual(
      all.data.map((n) => n.id),
      [d, c, b2],
    );
    assert.equal(all.meta.total, 3);
    const archived = await ids('?status=archived');
    assert.deepEqual(
      archived.data.map((n) => n.id),
      [a],
    );
    assert.equal(archived.data[0].status, 'archived');
    assert.equal(archived.meta.total, 1);
    assert.deepEqual(
      (await ids('?status=read')).data.map((n) => n.id),
      [b2],
    );
    assert.deepEqual(
      (await ids('?status=unread')).data.map((n) => n.id),
      [d, c],
    );
    assert.deepEqual(
      (await ids('?category=ai_run_completed')).data.map((n) => n.id),
      [d],
    );
    const unreadSystem = await ids('?category=system&status=unread');
    assert.deepEqual(
      unreadSystem.data.map((n) => n.id),
      [c],
    );
    assert.equal(unreadSystem.meta.total, 1);
    assert.equal((await row(a)).status, 'archived'); // retained
  });

  it('hides expired notifications from the list, the count, and by id', async () => {
    const u = await signedInUser(t.app);
    const [soon] = await seed(u.user.id, 1, { expiresAt: new Date(clock.now().getTime() + 60_000) });
    const [later] = await seed(u.user.id, 1, { expiresAt: new Date(clock.now().getTime() + 3_600_000) });
    const before = body<PresentedNotification[]>(await get('/api/v1/notifications', u.headers));
    assert.deepEqual(
      before.data.map((n) => n.id),
      [later, soon],
    );
    assert.equal(body<{ count: number }>(await get('/api/v1/notifications/unread-count', u.headers)).data.count, 2);
    clock.advance(120_000);
    const afterExpiry = body<PresentedNotification[]>(await get('/api/v1/notifications', u.headers));
    assert.deepEqual(
      afterExpiry.data.map((n) => n.id),
      [later],
    );
    assert.equal(afterExpiry.meta.total, 1);
    assert.equal(body<{ count: number }>(await get('/api/v1/notifications/unread-count', u.headers)).data.count, 1);
    assert.equal(
      (await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${soon}/read`, headers: u.headers })).statusCode,
      404,
    );
  });

  it('reads once: readAt is set on the first read and kept by the next (no-op)', async () => {
    const u = await signedInUser(t.app);
    const [id] = await seed(u.user.id, 1);
    const firstAt = clock.now().toISOString();
    const res = await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${id}/read`, headers: u.headers });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(body(res).data, { status: 'read' });
    assert.equal(res.headers['x-ratelimit-limit'], '30');
    assert.equal((await row(id)).read_at, firstAt);
    clock.advance(60_000);
    const again = await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${id}/read`, headers: u.headers });
    assert.deepEqual(body(again).data, { status: 'read' });
    const after = await row(id);
    assert.equal(after.status, 'read');
    assert.equal(after.read_at, firstAt);
    const listed = body<PresentedNotification[]>(await get('/api/v1/notifications', u.headers)).data[0];
    assert.equal(listed.readAt, firstAt);
  });

  it('archives any status, idempotently (archivedAt kept), and keeps archived when read', async () => {
    const u = await signedInUser(t.app);
    const [unread, read] = await seed(u.user.id, 2);
    await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${read}/read`, headers: u.headers });
    for (const id of [unread, read]) {
      const res = await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${id}/archive`, headers: u.headers });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(body(res).data, { status: 'archived' });
    }
    const archivedAt = (await row(unread)).archived_at;
    assert.ok(archivedAt);
    clock.advance(60_000);
    const again = await t.inject({
      method: 'PATCH',
      url: `/api/v1/notifications/${unread}/archive`,
      headers: u.headers,
    });
    assert.deepEqual(body(again).data, { status: 'archived' });
    assert.equal((await row(unread)).archived_at, archivedAt);
    // Reading an archived one records readAt once and leaves it archived.
    await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${unread}/read`, headers: u.headers });
    const readArchived = await row(unread);
    assert.equal(readArchived.status, 'archived');
    assert.equal(readArchived.read_at, clock.now().toISOString());
    assert.equal(body<{ count: number }>(await get('/api/v1/notifications/unread-count', u.headers)).data.count, 0);
  });

  it('marks all read: only the unread ones move, read and archived keep their times', async () => {
    const u = await signedInUser(t.app);
    const [x, y, z, w] = await seed(u.user.id, 4);
    await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${x}/read`, headers: u.headers });
    const xReadAt = (await row(x)).read_at;
    await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${y}/archive`, headers: u.headers });
    const other = await signedInUser(t.app);
    const [theirs] = await seed(other.user.id, 1);
    clock.advance(5_000);
    const res = await t.inject({ method: 'POST', url: '/api/v1/notifications/mark-all-read', headers: u.headers });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(body(res).data, { status: 'all_read' });
    assert.equal(res.headers['x-ratelimit-limit'], '10');
    const now = clock.now().toISOString();
    assert.equal((await row(x)).read_at, xReadAt);
    assert.equal((await row(y)).status, 'archived');
    assert.equal((await row(y)).read_at, null);
    for (const id of [z, w]) assert.deepEqual([(await row(id)).status, (await row(id)).read_at], ['read', now]);
    assert.equal((await row(theirs)).status, 'unread');
    assert.equal(body<{ count: number }>(await get('/api/v1/notifications/unread-count', u.headers)).data.count, 0);
    const again = await t.inject({ method: 'POST', url: '/api/v1/notifications/mark-all-read', headers: u.headers });
    assert.deepEqual(body(again).data, { status: 'all_read' });
  });

  it('counts unread only: {count}', async () => {
    const u = await signedInUser(t.app);
    const [a] = await seed(u.user.id, 3);
    const res = await get('/api/v1/notifications/unread-count', u.headers);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(body(res).data, { count: 3 });
    assert.equal(res.headers['x-ratelimit-limit'], '60');
    await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${a}/read`, headers: u.headers });
    assert.deepEqual(body(await get('/api/v1/notifications/unread-count', u.headers)).data, { count: 2 });
    // The count is now cached: a new notification is counted at once all the same.
    assert.deepEqual(body(await get('/api/v1/notifications/unread-count', u.headers)).data, { count: 2 });
    await seed(u.user.id, 1);
    assert.deepEqual(body(await get('/api/v1/notifications/unread-count', u.headers)).data, { count: 3 });
  });

  it('checks the session on every count: a signed-out token is refused though its count is cached', async () => {
    const u = await signedInUser(t.app);
    await seed(u.user.id, 1);
    assert.deepEqual(body(await get('/api/v1/notifications/unread-count', u.headers)).data, { count: 1 });
    const logout = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: u.headers,
      payload: { refreshToken: u.refreshToken },
    });
    assert.ok(logout.statusCode < 300, logout.payload);
    const refused = await get('/api/v1/notifications/unread-count', u.headers);
    assert.equal(refused.statusCode, 401);
    assert.equal(body(refused).error?.code, 'UNAUTHORIZED');
  });

  it("answers 403 for another user's notification on every mutating endpoint, changing nothing", async () => {
    const owner = await signedInUser(t.app);
    const intruder = await signedInUser(t.app);
    const [id] = await seed(owner.user.id, 1);
    for (const action of ['read', 'archive']) {
      const res = await t.inject({
        method: 'PATCH',
        url: `/api/v1/notifications/${id}/${action}`,
        headers: intruder.headers,
      });
      assert.equal(res.statusCode, 403, action);
      assert.equal(body(res).error?.code, 'FORBIDDEN');
    }
    // mark-all-read of the intruder touches only the intruder's own.
    await t.inject({ method: 'POST', url: '/api/v1/notifications/mark-all-read', headers: intruder.headers });
    const after = await row(id);
    assert.deepEqual([after.status, after.read_at, after.archived_at], ['unread', null, null]);
  });

  it('answers 404 for an unknown id and 422 for a malformed one', async () => {
    const u = await signedInUser(t.app);
    for (const action of ['read', 'archive']) {
      const unknown = await t.inject({
        method: 'PATCH',
        url: `/api/v1/notifications/${randomUUID()}/${action}`,
        headers: u.headers,
      });
      assert.equal(unknown.statusCode, 404);
      assert.equal(body(unknown).error?.code, 'NOT_FOUND');
      const malformed = await t.inject({
        method: 'PATCH',
        url: `/api/v1/notifications/not-a-uuid/${action}`,
        headers: u.headers,
      });
      assert.equal(malformed.statusCode, 422);
      assert.equal(body(malformed).error?.code, 'VALIDATION_FAILED');
    }
  });

  it('answers 401 to a missing or expired JWT on every endpoint', async () => {
    const u = await signedInUser(t.app);
    const id = randomUUID();
    const endpoints = [
      { method: 'GET', url: '/api/v1/notifications' },
      { method: 'GET', url: '/api/v1/notifications/unread-count' },
      { method: 'PATCH', url: `/api/v1/notifications/${id}/read` },
      { method: 'PATCH', url: `/api/v1/notifications/${id}/archive` },
      { method: 'POST', url: '/api/v1/notifications/mark-all-read' },
      { method: 'GET', url: '/api/v1/notifications/stream' },
    ];
    for (const e of endpoints) {
      const res = await t.inject(e);
      assert.equal(res.statusCode, 401, `${e.method} ${e.url}`);
      assert.equal(body(res).error?.code, 'UNAUTHORIZED');
    }
    clock.advance(3601_000);
    for (const e of endpoints) {
      const res = await t.inject({ ...e, headers: u.headers });
      assert.equal(res.statusCode, 401, `expired: ${e.method} ${e.url}`);
    }
  });

  it('applies the documented rate limits per user: 60 list/count, 30 read/archive, 10 mark-all-read', async () => {
    const cases = [
      { method: 'GET', url: () => '/api/v1/notifications', limit: 60 },
      { method: 'GET', url: () => '/api/v1/notifications/unread-count', limit: 60 },
      { method: 'PATCH', url: (id: string) => `/api/v1/notifications/${id}/read`, limit: 30 },
      { method: 'PATCH', url: (id: string) => `/api/v1/notifications/${id}/archive`, limit: 30 },
      { method: 'POST', url: () => '/api/v1/notifications/mark-all-read', limit: 10 },
    ];
    for (const c of cases) {
      const u = await signedInUser(t.app);
      const [id] = await seed(u.user.id, 1);
      for (let i = 0; i < c.limit; i++) {
        const ok = await t.inject({ method: c.method, url: c.url(id), headers: u.headers });
        assert.equal(ok.statusCode, 200, `${c.method} ${c.url(id)} #${i + 1}`);
      }
      const limited = await t.inject({ method: c.method, url: c.url(id), headers: u.headers });
      assert.equal(limited.statusCode, 429, `${c.method} ${c.url(id)}`);
      assert.equal(body(limited).error?.code, 'RATE_LIMIT_EXCEEDED');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      // Per user: someone else still gets through.
      const other = await signedInUser(t.app);
      const [otherId] = await seed(other.user.id, 1);
      assert.equal((await t.inject({ method: c.method, url: c.url(otherId), headers: other.headers })).statusCode, 200);
      clock.advance(61_000);
    }
  });

  it('publishes on the change feed when the unread count changes, and not for no-ops', async () => {
    const u = await signedInUser(t.app);
    const [a, b2] = await seed(u.user.id, 2);
    const seen: Array<string | null> = [];
    const stop = t.app.kernel.changes.subscribe(NOTIFICATIONS_TOPIC, (key) => seen.push(key));
    try {
      await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${a}/read`, headers: u.headers });
      assert.deepEqual(seen, [u.user.id]);
      await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${a}/read`, headers: u.headers });
      assert.equal(seen.length, 1);
      await t.inject({ method: 'PATCH', url: `/api/v1/notifications/${b2}/archive`, headers: u.headers });
      assert.equal(seen.length, 2);
      await t.inject({ method: 'POST', url: '/api/v1/notifications/mark-all-read', headers: u.headers });
      assert.equal(seen.length, 2);
      await seed(u.user.id, 1);
      await t.inject({ method: 'POST', url: '/api/v1/notifications/mark-all-read', headers: u.headers });
      assert.equal(seen.length, 4);
    } finally {
      stop();
    }
  });

  it('notify() validates its input and the recipient', async () => {
    const u = await signedInUser(t.app);
    const n = t.app.services.notifications;
    await assert.rejects(n.notifyNow({ userId: u.user.id, title: ' ', body: 'b' }), { code: 'VALIDATION_FAILED' });
    await assert.rejects(n.notifyNow({ userId: u.user.id, title: 't', body: 'b', priority: 'urgent' as never }), {
      code: 'VALIDATION_FAILED',
    });
    await assert.rejects(n.notifyNow({ userId: u.user.id, title: 't', body: 'b', actionUrl: 'javascript:alert(1)' }), {
      code: 'VALIDATION_FAILED',
    });
    await assert.rejects(n.notifyNow({ userId: u.user.id, title: 't', body: 'b', category: 'Bad Category' }), {
      code: 'VALIDATION_FAILED',
    });
    await assert.rejects(n.notifyNow({ userId: randomUUID(), title: 't', body: 'b' }), { code: 'NOT_FOUND' });
    const count = await t.app.kernel.db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', u.user.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });
});
