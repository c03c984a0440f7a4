import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { makeUser, signedInUser } from '../helpers/factories.js';
import { asUser, lastAudit } from '../helpers/accounts.js';

describe('gantry account', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());
  const run = (args: string[]) => cli(args, { dataDir: t.dataDir });

  it('create, list, show, suspend, activate', async () => {
    const owner = await makeUser(t.app);
    const created = await run([
      'account',
      'create',
      '--slug',
      'cli-acme',
      '--legal-name',
      'CLI Acme',
      '--owner',
      owner.email,
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const account = created.json<{ id: string; ownerChainerId: string; defaultWorkspaceId: string; status: string }>();
    assert.equal(account.ownerChainerId, owner.id);
    assert.equal(account.status, 'active');
    assert.equal(
      (await run(['account', 'create', '--slug', 'cli-acme', '--legal-name', 'Again', '--owner', owner.id])).code,
      2,
    );
    const bad = await run(['account', 'create', '--slug', 'X', '--legal-name', 'Bad', '--owner', owner.id]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /slug/);
    const missing = await run(['account', 'create', '--slug', 'cli-two', '--owner', owner.id]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--legal-name/);

    const list = await run(['account', 'list', '--json']);
    assert.ok(list.json<Array<{ id: string }>>().some((a) => a.id === account.id));
    assert.match((await run(['account', 'list'])).stdout, /cli-acme/);
    const shown = await run(['account', 'show', account.id, '--json']);
    assert.equal(shown.json<{ memberCount: number }>().memberCount, 1);
    assert.equal((await run(['account', 'show', '00000000-0000-4000-8000-000000000000'])).code, 2);

    const suspended = await run(['account', 'suspend', account.id, '--yes', '--json']);
    assert.equal(suspended.json<{ status: string }>().status, 'suspended');
    assert.equal((await lastAudit(t.app, account.id, 'account.suspended')).actorId, 'system');
    assert.equal(
      (await run(['account', 'activate', account.id, '--json'])).json<{ status: string }>().status,
      'active',
    );
    assert.equal((await lastAudit(t.app, account.id, 'account.activated')).actorUsername, 'system');
  });

  it('member add and remove (with the removal side effects), restore and approve-deletion', async () => {
    const owner = await makeUser(t.app);
    const account = await t.app.services.accounts.create(owner.id, { slug: 'cli-members', legalName: 'CLI Members' });
    const member = await signedInUser(t.app);
    const added = await run([
      'account',
      'member',
      'add',
      account.id,
      '--user',
      member.user.id,
      '--role',
      'analyst',
      '--json',
    ]);
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.json<{ role: string; status: string }>().role, 'analyst');
    assert.equal((await lastAudit(t.app, account.id, 'member.added')).actorId, 'system');
    assert.equal(
      (await run(['account', 'member', 'add', account.id, '--user', member.user.id, '--role', 'owner'])).code,
      2,
    );
    assert.equal((await run(['account', 'member', 'add', account.id, '--role', 'viewer'])).code, 2);
    assert.match((await run(['account', 'member', 'list', account.id])).stdout, /analyst/);
    const removed = await run([
      'account',
      'member',
      'remove',
      account.id,
      member.user.email,
      '--release-seat',
      '--yes',
      '--json',
    ]);
    assert.equal(removed.code, 0, removed.stderr);
    const body = removed.json<{ revokedSessions: number; seatRelease: { status: string } }>();
    // the removal ends the account's reach, not the user's sign-in
    assert.equal(body.revokedSessions, 0);
    assert.equal(body.seatRelease.status, 'billing_not_configured');
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: member.headers })).statusCode, 200);
    assert.equal((await t.inject({ url: `/api/v1/accounts/${account.id}`, headers: member.headers })).statusCode, 403);
    const lastOwner = await run(['account', 'member', 'remove', account.id, owner.id, '--yes', '--json']);
    assert.equal(lastOwner.code, 2);
    assert.equal(lastOwner.json<{ error: { code: string } }>().error.code, 'CONFLICT');

    await t.app.services.accounts.deletion.softDelete(asUser(owner.id), account.id);
    const restored = await run(['account', 'restore', account.id, '--json']);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(restored.json<{ status: string }>().status, 'active');
    assert.equal((await run(['account', 'restore', account.id])).code, 2);
    await t.app.services.accounts.deletion.softDelete(asUser(owner.id), account.id);
    assert.equal(
      (await run(['account', 'approve-deletion', account.id, '--yes', '--json'])).json<{ status: string }>().status,
      'deletion_approved',
    );
    const purge = await run(['account', 'purge', '--yes', '--json']);
    assert.deepEqual(purge.json<{ purged: string[] }>().purged, [account.id]);
    assert.equal(
      (await run(['account', 'show', account.id, '--json'])).json<{ status: string }>().status,
      'hard_deleted',
    );
  });

  it('entitle still works', async () => {
    const owner = await makeUser(t.app);
    const account = await t.app.services.accounts.create(owner.id, { slug: 'cli-entitle', legalName: 'CLI Entitle' });
    assert.equal((await run(['account', 'entitle', account.id, '--feature', 'ai'])).code, 0);
    assert.equal(await t.app.services.accounts.access.hasEntitlement(account.id, 'ai'), true);
    assert.equal((await lastAudit(t.app, account.id, 'account.entitlement_granted')).metadata.feature, 'ai');
  });
});
