import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';
import { openSse } from '../helpers/sse.js';

describe('notifications stream against the built binary', () => {
  let g: RunningGantry;
  before(async () => (g = await spawnGantry()));
  after(() => g.stop());

  it('pushes a notification created by `gantry notify` in another process, and SIGTERM still stops promptly', async () => {
    const created = await g.cli([
      'user',
      'create',
      '--email',
      'sse@example.test',
      '--password',
      'long enough pw',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const userId = (JSON.parse(created.stdout) as { id: string }).id;
    const login = await fetch(`${g.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'sse@example.test', password: 'long enough pw' }),
    });
    const { data } = (await login.json()) as { data: { accessToken: string } };

    const stream = await openSse(`${g.url}/api/v1/notifications/stream`, {
      authorization: `Bearer ${data.accessToken}`,
    });
    assert.equal(stream.status, 200);
    await stream.next((e) => e.event === 'unread-count' && JSON.parse(e.data).count === 0);

    const sent = await g.cli([
      'notify',
      '--user',
      userId,
      '--title',
      'Deploy finished',
      '--body',
      'All green',
      '--category',
      'system',
      '--json',
    ]);
    assert.equal(sent.code, 0, sent.stderr);
    const { id } = JSON.parse(sent.stdout) as { id: string };
    const pushed = await stream.next((e) => e.event === 'notification', 5000);
    const notification = JSON.parse(pushed.data);
    assert.equal(notification.id, id);
    assert.equal(notification.title, 'Deploy finished');
    await stream.next((e) => e.event === 'unread-count' && JSON.parse(e.data).count === 1, 5000);

    const started = Date.now();
    assert.equal(await g.stop(), 0);
    assert.ok(Date.now() - started < 10_000, `stopped in ${Date.now() - started} ms`);
    await stream.end();
    assert.ok(stream.events.some((e) => e.event === 'close' && JSON.parse(e.data).reason === 'server_stopping'));
  });
});
