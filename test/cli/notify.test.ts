import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { makeTeam, makeUser } from '../helpers/factories.js';

describe('gantry notify', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  const rowsOf = (userId: string) =>
    t.app.kernel.db.selectFrom('notifications').selectAll().where('user_id', '=', userId).execute();

  it('notifies one user with every option', async () => {
    const user = await makeUser(t.app);
    const res = await cli(
      [
        'notify',
        '--user',
        user.id,
        '--title',
        'Maintenance',
        '--body',
        'Tonight at 22:00',
        '--category',
        'system',
        '--priority',
        'high',
        '--action-url',
        'https://status.example.test',
        '--json',
      ],
      { dataDir: t.dataDir },
    );
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<{ id: string; userId: string }>();
    assert.equal(out.userId, user.id);
    const [row] = await rowsOf(user.id);
    assert.equal(row.id, out.id);
    assert.deepEqual(
      [row.title, row.body, row.category, row.priority, row.action_url, row.status],
      ['Maintenance', 'Tonight at 22:00', 'system', 'high', 'https://status.example.test', 'unread'],
    );
    const human = await cli(['notify', '--user', user.id, '--title', 'Second', '--body', 'b'], { dataDir: t.dataDir });
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^notification \S+ sent to user /);
    assert.equal((await rowsOf(user.id)).length, 2);
  });

  it('notifies every active member of an account with --account, not invited ones', async () => {
    const team = await makeTeam(t.app, ['admin', 'member']);
    const invited = await makeUser(t.app);
    const now = new Date().toISOString();
    await t.app.kernel.db
      .insertInto('account_members')
      .values({
        account_id: team.account.id,
        user_id: invited.id,
        role: 'member',
        status: 'invited',
        invited_by: team.owner.user.id,
        joined_at: null,
        created_at: now,
      })
      .execute();
    const res = await cli(
      ['notify', '--account', team.account.id, '--title', 'Plan changed', '--body', 'b', '--json'],
      { dataDir: t.dataDir },
    );
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<{
      accountId: string;
      notified: number;
      notifications: Array<{ userId: string; id: string }>;
    }>();
    assert.equal(out.notified, 3);
    assert.deepEqual(
      out.notifications.map((n) => n.userId).sort(),
      [team.owner.user.id, team.members.admin.user.id, team.members.member.user.id].sort(),
    );
    for (const member of [team.owner, team.members.admin, team.members.member])
      assert.equal((await rowsOf(member.user.id)).length, 1);
    assert.equal((await rowsOf(invited.id)).length, 0);
  });

  it('exits 2 naming what is missing or wrong, and writes nothing', async () => {
    const user = await makeUser(t.app);
    const cases: Array<[string[], RegExp]> = [
      [['notify', '--title', 't', '--body', 'b'], /--user/],
      [['notify', '--user', user.id, '--body', 'b'], /--title/],
      [['notify', '--user', user.id, '--title', 't'], /--body/],
      [
        ['notify', '--user', user.id, '--account', randomUUID(), '--title', 't', '--body', 'b'],
        /either --user or --account/,
      ],
      [
        ['notify', '--user', user.id, '--title', 't', '--body', 'b', '--priority', 'urgent'],
        /priority must be one of low, normal, high/,
      ],
      [
        ['notify', '--user', user.id, '--title', 't', '--body', 'b', '--action-url', 'javascript:alert(1)'],
        /actionUrl/,
      ],
      [['notify', '--user', user.id, '--title', 't', '--body', 'b', '--expires-at', 'soon'], /--expires-at/],
      [['notify', '--user', randomUUID(), '--title', 't', '--body', 'b'], /User not found/],
      [['notify', '--account', randomUUID(), '--title', 't', '--body', 'b'], /Account not found/],
    ];
    for (const [args, message] of cases) {
      const res = await cli(args, { dataDir: t.dataDir });
      assert.equal(res.code, 2, args.join(' '));
      assert.match(res.stderr, message, args.join(' '));
    }
    assert.equal((await rowsOf(user.id)).length, 0);
  });
});
