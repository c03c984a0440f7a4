import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeTeam, signedInUser } from '../helpers/factories.js';
import { auditOf, call, lastAudit } from '../helpers/accounts.js';
import { userPrincipal } from '../../src/http/auth.js';

let n = 0;
const slug = (prefix = 's') => `${prefix}-${Date.now().toString(36)}-${n++}`;

describe('accounts: create, read, update, delete', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('POST /accounts creates an active account with its default workspace and the extras', async () => {
    const { user, headers } = await signedInUser(t.app, { username: `u${Date.now()}` });
    const s = slug('acme');
    const res = await call(t, 'POST', 'accounts', headers, {
      slug: s,
      legalName: 'Acme Ltd',
      displayName: 'Acme',
      website: 'https://acme.test',
      industry: 'Tools',
      billingEmail: 'billing@acme.test',
      defaultTimezone: 'Europe/Berlin',
      avatarUrl: 'https://acme.test/a.png',
    });
    assert.equal(res.status, 201);
    const d = res.body.data;
    assert.deepEqual(
      Object.keys(d).sort(),
      [
        'accountType',
        'avatarUrl',
        'billingEmail',
        'createdAt',
        'defaultTimezone',
        'defaultWorkspaceId',
        'displayName',
        'id',
        'industry',
        'legalName',
        'ownerChainerId',
        'slug',
        'status',
        'updatedAt',
        'website',
      ].sort(),
    );
    assert.equal(d.status, 'active');
    assert.equal(d.accountType, 'organisation');
    assert.equal(d.ownerChainerId, user.id);
    assert.equal(d.defaultTimezone, 'Europe/Berlin');
    const ws = await t.app.kernel.db
      .selectFrom('workspaces')
      .selectAll()
      .where('id', '=', d.defaultWorkspaceId)
      .executeTakeFirstOrThrow();
    assert.equal(ws.is_default, 1);
    assert.equal(ws.account_id, d.id);
    const created = await lastAudit(t.app, d.id, 'account.created');
    assert.equal(created.actorId, user.id);
    assert.equal(created.actorUsername, user.username);
  });

  it('refuses a duplicate slug with 409 and a status field with 400', async () => {
    const { headers } = await signedInUser(t.app);
    const s = slug('dup');
    assert.equal((await call(t, 'POST', 'accounts', headers, { slug: s, legalName: 'One' })).status, 201);
    const dup = await call(t, 'POST', 'accounts', headers, { slug: s, legalName: 'Two' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error!.code, 'CONFLICT');
    const withStatus = await call(t, 'POST', 'accounts', headers, { slug: slug(), legalName: 'Two', status: 'active' });
    assert.equal(withStatus.status, 400);
  });

  describe('validation bounds (just inside passes, just outside fails)', () => {
    // Slugs must be unique: `tail(len)` is a fresh lower-case alphanumeric string of that length.
    const tail = (len: number) =>
      (Date.now().toString(36) + (n++).toString(36).padStart(4, '0')).padStart(len, 'a').slice(-len);
    const cases: Array<[string, () => unknown, unknown]> = [
      ['slug', () => tail(3), 'ab'],
      // docs/interface.md (Limits) says 3-64 characters, and its pattern allows 1+61+1 = 63: both hold, so 63 is the max.
      ['slug', () => tail(63), 'a'.repeat(64)],
      ['slug', () => `${tail(1)}-${tail(1)}`, '-ab'],
      ['slug', () => `${tail(5)}-0`, 'ab-'],
      ['slug', () => `x-${tail(6)}`, 'Abc'],
      ['legalName', () => 'Ab', 'A'],
      ['legalName', () => 'L'.repeat(180), 'L'.repeat(181)],
      ['displayName', () => 'D'.repeat(180), 'D'.repeat(181)],
      ['industry', () => 'I'.repeat(120), 'I'.repeat(121)],
      ['defaultTimezone', () => 'America/Argentina/Buenos_Aires', 'Mars/Olympus'],
      ['defaultTimezone', () => 'UTC', 'Europe/' + 'x'.repeat(120)],
      ['defaultTimezone', () => 'Asia/Kolkata', '+05:30'],
      ['website', () => 'http://a.test', 'ftp://a.test'],
      ['website', () => 'https://a.test/x', 'not a url'],
      ['avatarUrl', () => 'https://a.test/p.png', 'javascript:alert(1)'],
      ['billingEmail', () => 'a@b.test', 'a@'],
    ];
    for (const [field, inside, outside] of cases) {
      it(`${field}: just inside accepted, ${JSON.stringify(outside).slice(0, 24)} refused`, async () => {
        const { headers } = await signedInUser(t.app);
        const base = { slug: slug('v'), legalName: 'Valid Name' };
        const ok = await call(t, 'POST', 'accounts', headers, { ...base, [field]: inside() });
        assert.equal(ok.status, 201, JSON.stringify(ok.body.error));
        const bad = await call(t, 'POST', 'accounts', headers, { ...base, slug: slug('v'), [field]: outside });
        assert.equal(bad.status, 400);
        assert.equal(bad.body.error!.code, 'VALIDATION_FAILED');
        assert.ok((bad.body.error!.details as Array<{ field: string }>).some((d) => d.field === field));
        // the same rule holds on PATCH, and nothing changes
        const patched = await call(t, 'PATCH', `accounts/${ok.body.data.id}`, headers, { [field]: outside });
        assert.equal(patched.status, 400);
        assert.deepEqual(
          await t.app.services.accounts.get(ok.body.data.id),
          (await call(t, 'GET', 'accounts/me', { ...headers, 'x-account-id': ok.body.data.id })).body.data,
        );
      });
    }
  });

  it('GET /accounts/me follows X-Account-Id, else the oldest membership', async () => {
    const { user, headers } = await signedInUser(t.app);
    const first = await makeAccount(t.app, user.id);
    const second = await makeAccount(t.app, user.id);
    const me = await call(t, 'GET', 'accounts/me', headers);
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, first.id);
    assert.deepEqual(
      Object.keys(me.body.data).sort(),
      [
        'avatarUrl',
        'billingEmail',
        'createdAt',
        'defaultTimezone',
        'displayName',
        'id',
        'industry',
        'legalName',
        'slug',
        'status',
        'updatedAt',
        'website',
      ].sort(),
    );
    const chosen = await call(t, 'GET', 'accounts/me', { ...headers, 'x-account-id': second.id });
    assert.equal(chosen.body.data.id, second.id);
    const stranger = await signedInUser(t.app);
    assert.equal((await call(t, 'GET', 'accounts/me', { ...stranger.headers, 'x-account-id': second.id })).status, 403);
    assert.equal((await call(t, 'GET', 'accounts/me', stranger.headers)).status, 404);
  });

  it('GET /accounts/:id gives the summary with the caller role; 403 for non-members; 422 for a malformed id', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['viewer']);
    const res = await call(t, 'GET', `accounts/${account.id}`, members.viewer.headers);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      id: account.id,
      name: 'Test Org Ltd',
      slug: account.slug,
      role: 'viewer',
      createdAt: account.createdAt,
      updatedAt: account.updatedAt,
    });
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, owner.headers)).body.data.role, 'owner');
    const stranger = await signedInUser(t.app);
    const denied = await call(t, 'GET', `accounts/${account.id}`, stranger.headers);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error!.code, 'FORBIDDEN');
    // An id that does not exist gets the same answer: strangers cannot probe which ids do.
    const unknown = await call(t, 'GET', `accounts/${crypto.randomUUID()}`, stranger.headers);
    assert.equal(unknown.status, 403);
    assert.equal(unknown.body.error!.message, denied.body.error!.message);
    assert.equal((await call(t, 'GET', 'accounts/not-a-uuid', owner.headers)).status, 422);
    assert.equal((await call(t, 'GET', `accounts/${account.id}`)).status, 401);
  });

  it('PATCH audits one account.updated entry per changed field with old and new values', async () => {
    const { owner, account } = await makeTeam(t.app);
    const newSlug = slug('renamed');
    const res = await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, {
      slug: newSlug,
      displayName: 'Shown',
      industry: null,
      legalName: 'Test Org Ltd',
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.slug, newSlug);
    assert.equal(res.body.data.displayName, 'Shown');
    const updates = (await auditOf(t.app, account.id)).filter((e) => e.action === 'account.updated');
    assert.deepEqual(
      updates.map((u) => u.metadata),
      [
        { field: 'slug', oldValue: account.slug, newValue: newSlug },
        { field: 'displayName', oldValue: null, newValue: 'Shown' },
      ],
    );
    const other = await makeAccount(t.app, owner.user.id);
    const taken = await call(t, 'PATCH', `accounts/${other.id}`, owner.headers, { slug: newSlug });
    assert.equal(taken.status, 409);
    assert.equal((await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, {})).status, 400);
  });

  it('PATCH status moves only active <-> suspended; the deletion statuses are refused with a clear 400', async () => {
    const { owner, account } = await makeTeam(t.app);
    const suspended = await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, { status: 'suspended' });
    assert.equal(suspended.body.data.status, 'suspended');
    assert.deepEqual((await lastAudit(t.app, account.id, 'account.suspended')).metadata, {
      field: 'status',
      oldValue: 'active',
      newValue: 'suspended',
    });
    // a suspended account still allows reads and its own management
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, owner.headers)).status, 200);
    const ctx = await t.app.services.accounts.access.inAccount(userPrincipal(owner.user.id), account.id);
    assert.throws(
      () => t.app.services.accounts.access.assertWritable(ctx),
      (err: { code: string; status: number }) => err.code === 'ACCOUNT_SUSPENDED' && err.status === 403,
    );
    const active = await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, { status: 'active' });
    assert.equal(active.body.data.status, 'active');
    assert.equal((await lastAudit(t.app, account.id, 'account.activated')).metadata.newValue, 'active');
    for (const status of ['closed', 'deletion_approved', 'hard_deleted']) {
      const refused = await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, { status });
      assert.equal(refused.status, 400);
      assert.match(refused.body.error!.message, /only be set to active or suspended/);
    }
    assert.equal((await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, { status: 'frozen' })).status, 400);
    assert.equal((await t.app.services.accounts.get(account.id)).status, 'active');
  });

  it('DELETE soft-deletes (closed, deletedAt, retention), then the account is gone for members', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['admin']);
    assert.equal((await call(t, 'DELETE', `accounts/${account.id}`, members.admin.headers)).status, 403);
    const res = await call(t, 'DELETE', `accounts/${account.id}`, owner.headers);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body.data).sort(), ['deletedAt', 'id']);
    const row = await t.app.kernel.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'closed');
    assert.equal(row.deleted_at, res.body.data.deletedAt);
    assert.equal(new Date(row.purge_after!).getTime() - new Date(row.deleted_at!).getTime(), 30 * 86_400_000);
    const deleted = await lastAudit(t.app, account.id, 'account.deleted');
    assert.equal(deleted.actorId, owner.user.id);
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, owner.headers)).status, 404);
    assert.equal((await call(t, 'DELETE', `accounts/${account.id}`, owner.headers)).status, 404);
  });
});
