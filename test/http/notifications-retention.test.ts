import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { notificationsJobs } from '../../src/notifications/jobs.js';
import { collectJobs } from '../../src/app.js';

const DAY = 86_400_000;

describe('notifications retention job', () => {
  const clock = new ManualClock('2026-04-01T00:00:00.000Z');
  let t: TestApp;
  before(async () => (t = await createTestApp({ clock, env: { GANTRY_NOTIFICATION_RETENTION_DAYS: '30' } })));
  after(() => t.close());

  const exists = async (id: string) =>
    !!(await t.app.kernel.db.selectFrom('notifications').select('id').where('id', '=', id).executeTakeFirst());

  it('is scheduled with the server', () => {
    const job = collectJobs(t.app).find((j) => j.name === 'notifications.purge');
    assert.ok(job);
    assert.match(job.pattern, /^\S+ \S+ \* \* \*$/);
  });

  it('purges archived and expired notifications past the retention period, and nothing else', async () => {
    const user = await makeUser(t.app);
    const other = await makeUser(t.app);
    const n = t.app.services.notifications;
    const notify = (extra: { expiresAt?: Date; userId?: string } = {}) =>
      n.notifyNow({ userId: extra.userId ?? user.id, title: 't', body: 'b', expiresAt: extra.expiresAt });

    const oldArchived = await notify();
    const oldRead = await notify();
    const oldUnread = await notify({ userId: other.id });
    const expiredLongAgo = await notify({ expiresAt: new Date(clock.now().getTime() + DAY) });
    await n.archive(user.id, oldArchived);
    await n.markRead(user.id, oldRead);

    clock.advance(20 * DAY);
    const recentArchived = await notify();
    await n.archive(user.id, recentArchived);
    const expiredRecently = await notify({ expiresAt: new Date(clock.now().getTime() + DAY) });
    const notExpiring = await notify({ expiresAt: new Date(clock.now().getTime() + 365 * DAY) });

    clock.advance(15 * DAY); // day 35: archived/expired on day 0-1 are past 30 days; day 20-21 are not.
    const [job] = notificationsJobs(t.app.services.notifications, t.app.kernel);
    const purged = await job.run(clock.now());
    assert.equal(purged, 2);
    assert.equal(await exists(oldArchived), false);
    assert.equal(await exists(expiredLongAgo), false);
    for (const kept of [oldRead, oldUnread, recentArchived, expiredRecently, notExpiring])
      assert.equal(await exists(kept), true);

    clock.advance(30 * DAY);
    assert.equal(await job.run(clock.now()), 2);
    assert.equal(await exists(recentArchived), false);
    assert.equal(await exists(expiredRecently), false);
    for (const kept of [oldRead, oldUnread, notExpiring]) assert.equal(await exists(kept), true);
  });
});
