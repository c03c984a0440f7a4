import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { makeUser } from '../helpers/factories.js';
import { makeClient } from '../helpers/oauth.js';

/**
 * Commands take what an operator knows: a user's email, an account's slug, a client's name, as
 * well as ids; when a word names two, the command refuses and lists their ids (docs/kernel.md, CLI).
 */
describe('users, accounts and clients by what the operator knows', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());
  const run = (args: string[]) => cli(args, { dataDir: t.dataDir });

  it('a user by email', async () => {
    const user = await makeUser(t.app);
    const credited = await run(['wallet', 'credit', user.email.toUpperCase(), '3', '--json']);
    assert.equal(credited.code, 0, credited.stderr);
    assert.equal(credited.json<{ userId: string }>().userId, user.id);
    assert.equal((await t.app.services.wallet.get(user.id)).balance, 3);
    const shown = await run(['wallet', 'show', user.email, '--json']);
    assert.equal(shown.json<{ userId: string }>().userId, user.id);
    const notified = await run(['notify', '--user', user.email, '--title', 'Hi', '--body', 'There', '--json']);
    assert.equal(notified.json<{ userId: string }>().userId, user.id);
    const unknown = await run(['wallet', 'show', 'nobody@example.test', '--json']);
    assert.equal(unknown.code, 2);
    assert.deepEqual(unknown.json(), {
      error: { code: 'NOT_FOUND', message: 'User not found: no id or email "nobody@example.test"' },
    });
  });

  it('an account by slug, in every account command', async () => {
    const owner = await makeUser(t.app);
    const member = await makeUser(t.app);
    const created = await run([
      'account',
      'create',
      '--slug',
      'by-slug',
      '--legal-name',
      'By Slug',
      '--owner',
      owner.email,
      '--json',
    ]);
    const { id } = created.json<{ id: string }>();
    assert.equal((await run(['account', 'show', 'by-slug', '--json'])).json<{ id: string }>().id, id);
    const added = await run(['account', 'member', 'add', 'by-slug', '--user', member.email, '--json']);
    assert.equal(added.code, 0, added.stderr);
    assert.match((await run(['account', 'member', 'list', 'by-slug'])).stdout, new RegExp(member.id));
    assert.equal((await run(['account', 'entitle', 'by-slug', '--feature', 'ai'])).code, 0);
    assert.equal(await t.app.services.accounts.access.hasEntitlement(id, 'ai'), true);
    const removed = await run(['account', 'member', 'remove', 'by-slug', member.email, '--yes', '--json']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await run(['account', 'suspend', 'by-slug', '--yes'])).code, 0);
    assert.equal((await t.app.services.accounts.show(id)).status, 'suspended');
    const notified = await run(['notify', '--account', 'by-slug', '--title', 'T', '--body', 'B', '--json']);
    assert.equal(notified.json<{ accountId: string; notified: number }>().accountId, id);
  });

  it("a slug shaped like another account's id: refused, listing both ids", async () => {
    const owner = await makeUser(t.app);
    const first = await t.app.services.accounts.create(owner.id, { slug: 'first-of-two', legalName: 'First' });
    const second = await t.app.services.accounts.create(owner.id, { slug: first.id, legalName: 'Second' });
    const res = await run(['account', 'suspend', first.id, '--yes', '--json']);
    assert.equal(res.code, 2);
    const { error } = res.json<{ error: { code: string; message: string } }>();
    assert.equal(error.code, 'USAGE');
    assert.match(error.message, new RegExp(`^"${first.id}" names 2 accounts: `));
    assert.ok(error.message.includes(`${first.id} (slug first-of-two, active)`), error.message);
    assert.ok(error.message.includes(`${second.id} (slug ${first.id}, active)`), error.message);
    assert.equal((await t.app.services.accounts.show(first.id)).status, 'active');
    assert.equal((await t.app.services.accounts.show(second.id)).status, 'active');
    // The slug that names one account alone still works.
    assert.equal((await run(['account', 'show', 'first-of-two', '--json'])).json<{ id: string }>().id, first.id);
  });

  it('a client by name; two clients of one name are refused, listing both, neither touched', async () => {
    const only = await makeClient(t, { name: 'Only App' });
    assert.equal(
      (await run(['client', 'show', 'Only App', '--json'])).json<{ clientId: string }>().clientId,
      only.clientId,
    );
    const a = await makeClient(t, { name: 'Twin App' });
    const b = await makeClient(t, { name: 'Twin App' });
    const res = await run(['client', 'delete', 'Twin App', '--yes', '--json']);
    assert.equal(res.code, 2);
    const { error } = res.json<{ error: { code: string; message: string } }>();
    assert.equal(error.code, 'USAGE');
    assert.match(error.message, /^"Twin App" names 2 clients: .*; give the id$/);
    assert.ok(error.message.includes(`${a.clientId} (Twin App, cli, created `), error.message);
    assert.ok(error.message.includes(`${b.clientId} (Twin App, cli, created `), error.message);
    assert.match(res.stderr, /names 2 clients/);
    for (const id of [a.clientId, b.clientId])
      assert.equal((await t.app.services.oauth.clients.show(id)).name, 'Twin App');
    const byId = await run(['client', 'delete', a.clientId, '--yes', '--json']);
    assert.equal(byId.code, 0, byId.stderr);
    // One twin left: its name names it alone now.
    const rotated = await run(['client', 'rotate-secret', 'Twin App', '--yes', '--json']);
    assert.equal(rotated.json<{ clientId: string }>().clientId, b.clientId);
  });
});
