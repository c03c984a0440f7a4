import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { OPERATOR } from '../../src/accounts/access.js';
import { bearer, makeTeam, makeUser, signedInUser } from '../helpers/factories.js';
import { call, lastAudit } from '../helpers/accounts.js';
import type { BillingAdapter } from '../../src/accounts/billing.js';
import { ManualClock } from '../../src/lib/clock.js';

describe('accounts: members, API keys, seat release', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-03-01T10:00:00.000Z');
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  it('lists members with the documented fields, limit up to 500 and meta.total', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['admin', 'viewer']);
    const res = await call(t, 'GET', `accounts/${account.id}/members?limit=500`, members.viewer.headers);
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.total, 3);
    assert.equal(res.body.meta.limit, 500);
    const ownerRow = res.body.data.find((m: { chainerId: string }) => m.chainerId === owner.user.id);
    assert.deepEqual(
      Object.keys(ownerRow).sort(),
      [
        'accountId',
        'avatarUrl',
        'chainerId',
        'email',
        'fullName',
        'invitedBy',
        'joinedAt',
        'role',
        'status',
        'username',
      ].sort(),
    );
    assert.equal(ownerRow.role, 'owner');
    assert.equal(ownerRow.invitedBy, null);
    assert.equal((await call(t, 'GET', `accounts/${account.id}/members?limit=501`, owner.headers)).status, 400);
    assert.equal((await call(t, 'GET', `accounts/${account.id}/members?limit=0`, owner.headers)).status, 400);
    assert.equal((await call(t, 'GET', `accounts/${account.id}/members?offset=-1`, owner.headers)).status, 400);
    const page = await call(t, 'GET', `accounts/${account.id}/members?limit=1&offset=2`, owner.headers);
    assert.equal(page.body.data.length, 1);
    assert.equal(page.body.meta.hasNextPage, false);
  });

  it('adds an existing user (default role member, in the default workspace, notified) and refuses duplicates, unknown users and owner', async () => {
    const { owner, account } = await makeTeam(t.app);
    const user = await makeUser(t.app);
    const res = await call(t, 'POST', `accounts/${account.id}/members`, owner.headers, { chainerId: user.id });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.role, 'member');
    assert.equal(res.body.data.status, 'active');
    assert.equal(res.body.data.invitedBy, owner.user.id);
    const ws = await t.app.kernel.db
      .selectFrom('workspace_members')
      .selectAll()
      .where('workspace_id', '=', account.defaultWorkspaceId)
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    assert.ok(ws);
    const note = await t.app.kernel.db
      .selectFrom('notifications')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    assert.match(note!.title, /added to/);
    assert.deepEqual((await lastAudit(t.app, account.id, 'member.added')).metadata.role, 'member');
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/members`, owner.headers, { chainerId: user.id })).status,
      409,
    );
    assert.equal(
      (
        await call(t, 'POST', `accounts/${account.id}/members`, owner.headers, {
          chainerId: '00000000-0000-4000-8000-000000000000',
        })
      ).status,
      404,
    );
    assert.equal(
      (
        await call(t, 'POST', `accounts/${account.id}/members`, owner.headers, {
          chainerId: (await makeUser(t.app)).id,
          role: 'owner',
        })
      ).status,
      400,
    );
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/members`, owner.headers, { chainerId: 'nope', role: 'admin' }))
        .status,
      400,
    );
    for (const role of ['admin', 'analyst', 'billing', 'viewer', 'member']) {
      assert.equal(
        (
          await call(t, 'POST', `accounts/${account.id}/members`, owner.headers, {
            chainerId: (await makeUser(t.app)).id,
            role,
          })
        ).status,
        201,
        role,
      );
    }
  });

  it('changes roles (assignable only), never demotes or removes the last owner', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['admin', 'member']);
    const res = await call(
      t,
      'PATCH',
      `accounts/${account.id}/members/${members.member.user.id}`,
      members.admin.headers,
      { role: 'billing' },
    );
    assert.equal(res.body.data.role, 'billing');
    assert.deepEqual((await lastAudit(t.app, account.id, 'member.role_changed')).metadata, {
      oldRole: 'member',
      newRole: 'billing',
    });
    assert.equal(
      (
        await call(t, 'PATCH', `accounts/${account.id}/members/${members.member.user.id}`, owner.headers, {
          role: 'owner',
        })
      ).status,
      400,
    );
    assert.equal(
      (await call(t, 'PATCH', `accounts/${account.id}/members/${members.member.user.id}`, owner.headers, {})).status,
      400,
    );
    const demote = await call(t, 'PATCH', `accounts/${account.id}/members/${owner.user.id}`, members.admin.headers, {
      role: 'admin',
    });
    assert.equal(demote.status, 409);
    assert.match(demote.body.error!.message, /last owner/);
    const remove = await call(t, 'DELETE', `accounts/${account.id}/members/${owner.user.id}`, owner.headers);
    assert.equal(remove.status, 409);
    assert.equal((await t.app.services.accounts.members.get(account.id, owner.user.id)).role, 'owner');
    assert.equal(
      (
        await call(t, 'PATCH', `accounts/${account.id}/members/00000000-0000-4000-8000-000000000000`, owner.headers, {
          role: 'viewer',
        })
      ).status,
      404,
    );
  });

  it('removal revokes the member API keys (the key stops working) and workspace memberships; the session stays, shut out of the account', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['analyst']);
    const victim = members.analyst;
    const key = await call(t, 'POST', `accounts/${account.id}/api-keys`, victim.headers, { name: 'deploy bot' });
    assert.equal(key.status, 201);
    const apiKey = key.body.data.key as string;
    assert.ok(apiKey.startsWith(key.body.data.keyPrefix));
    assert.equal(apiKey.slice(-4), key.body.data.lastFour);
    // the key works as a bearer on account endpoints, with its owner's role
    const asKey = await call(t, 'GET', `accounts/${account.id}`, bearer(apiKey));
    assert.equal(asKey.status, 200);
    assert.equal(asKey.body.data.role, 'analyst');
    assert.equal((await call(t, 'PATCH', `accounts/${account.id}`, bearer(apiKey), { displayName: 'x' })).status, 403);
    // but not on endpoints that do not take keys
    assert.equal((await call(t, 'GET', 'auth/me', bearer(apiKey))).status, 403);
    const ws = await t.app.services.accounts.workspaces.create(OPERATOR, account.id, 'Extra');
    await t.app.services.accounts.workspaces.addMember(OPERATOR, account.id, ws.id, {
      chainerId: victim.user.id,
      role: 'member',
    });
    assert.equal((await call(t, 'GET', 'auth/me', victim.headers)).status, 200);

    const res = await call(t, 'DELETE', `accounts/${account.id}/members/${victim.user.id}`, owner.headers);
    assert.equal(res.status, 200);
    const d = res.body.data;
    assert.equal(d.chainerId, victim.user.id);
    assert.equal(d.role, 'analyst');
    assert.deepEqual(d.revokedApiKeys, [
      {
        id: key.body.data.id,
        name: 'deploy bot',
        keyPrefix: key.body.data.keyPrefix,
        lastFour: key.body.data.lastFour,
      },
    ]);
    assert.equal(d.removedWorkspaceMemberships, 2);
    assert.equal(d.revokedSessions, 0);
    assert.deepEqual(d.seatRelease, { status: 'not_requested' });
    // the side effects are real
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, bearer(apiKey))).status, 401);
    assert.equal((await call(t, 'GET', 'auth/me', victim.headers)).status, 200);
    const shut = await call(t, 'GET', `accounts/${account.id}`, victim.headers);
    assert.equal(shut.status, 403);
    assert.equal(shut.body.error!.code, 'FORBIDDEN');
    assert.equal(
      (
        await t.app.kernel.db
          .selectFrom('workspace_members')
          .select('user_id')
          .where('user_id', '=', victim.user.id)
          .execute()
      ).length,
      0,
    );
    const audit = await lastAudit(t.app, account.id, 'member.removed');
    assert.equal(audit.targetId, victim.user.id);
    assert.equal(audit.metadata.revokedSessions, 0);
    assert.equal(
      (await call(t, 'DELETE', `accounts/${account.id}/members/${victim.user.id}`, owner.headers)).status,
      404,
    );
  });

  it('releaseSeat: only the literal true; without billing the status says billing_not_configured', async () => {
    const { owner, account } = await makeTeam(t.app);
    const add = async () => {
      const u = await makeUser(t.app);
      await t.app.services.accounts.members.add(OPERATOR, account.id, { chainerId: u.id, role: 'member' });
      return u.id;
    };
    assert.equal(
      (await call(t, 'DELETE', `accounts/${account.id}/members/${await add()}?releaseSeat=false`, owner.headers)).body
        .data.seatRelease.status,
      'not_requested',
    );
    for (const value of ['1', 'TRUE', 'yes', 'True']) {
      const id = await add();
      assert.equal(
        (await call(t, 'DELETE', `accounts/${account.id}/members/${id}?releaseSeat=${value}`, owner.headers)).status,
        400,
        value,
      );
      assert.ok(await t.app.services.accounts.members.get(account.id, id), 'still a member');
    }
    const res = await call(
      t,
      'DELETE',
      `accounts/${account.id}/members/${await add()}?releaseSeat=true`,
      owner.headers,
    );
    assert.deepEqual(res.body.data.seatRelease, { status: 'billing_not_configured' });
    assert.equal((await lastAudit(t.app, account.id, 'member.removed')).metadata.releaseSeat, true);
  });

  describe('with a billing provider', () => {
    let provider: Server;
    let providerUrl = '';
    const received: Array<Record<string, string>> = [];
    before(async () => {
      // A small stand-in for the billing provider on loopback.
      provider = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          const parsed = JSON.parse(body);
          received.push(parsed);
          res.writeHead(parsed.accountId === 'refuse' ? 422 : 200, { 'content-type': 'application/json' }).end('{}');
        });
      });
      await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
      providerUrl = `http://127.0.0.1:${(provider.address() as { port: number }).port}/seats`;
      const adapter: BillingAdapter = {
        name: 'test-provider',
        async releaseSeat(request) {
          const res = await fetch(providerUrl, { method: 'POST', body: JSON.stringify(request) });
          return res.ok ? { accepted: true } : { accepted: false, reason: 'provider_refused' };
        },
      };
      t.app.services.accounts.useBillingAdapter(adapter);
    });
    after(async () => {
      t.app.services.accounts.useBillingAdapter(null);
      await new Promise((resolve) => provider.close(resolve));
    });

    it('requested when the provider accepts, asked after the removal committed', async () => {
      const { owner, account, members } = await makeTeam(t.app, ['member']);
      const res = await call(
        t,
        'DELETE',
        `accounts/${account.id}/members/${members.member.user.id}?releaseSeat=true`,
        owner.headers,
      );
      assert.deepEqual(res.body.data.seatRelease, { status: 'requested' });
      const request = received.at(-1)!;
      assert.equal(request.userId, members.member.user.id);
      assert.equal(request.accountId, account.id);
      assert.equal((await lastAudit(t.app, account.id, 'seat.release_requested')).metadata.status, 'requested');
      const release = await t.app.services.accounts.seatReleases.get(request.releaseId);
      assert.equal(release!.status, 'requested');
      assert.equal(release!.chainerId, members.member.user.id);
      // The confirmation comes from the provider's webhook (test/http/billing-stripe.test.ts).
    });

    it('a provider refusal is reported as the reason', async () => {
      const { owner, account, members } = await makeTeam(t.app, ['member']);
      t.app.services.accounts.useBillingAdapter({
        name: 'refusing',
        releaseSeat: async () => ({ accepted: false, reason: 'seat_minimum_reached' }),
      });
      const res = await call(
        t,
        'DELETE',
        `accounts/${account.id}/members/${members.member.user.id}?releaseSeat=true`,
        owner.headers,
      );
      assert.deepEqual(res.body.data.seatRelease, { status: 'seat_minimum_reached' });
    });
  });

  it('API keys: listed without the secret, revoked by owner or admin, usable only in their account', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['admin', 'viewer']);
    const created = await call(t, 'POST', `accounts/${account.id}/api-keys`, members.viewer.headers, { name: 'k1' });
    assert.equal((await lastAudit(t.app, account.id, 'api_key.created')).metadata.name, 'k1');
    const stored = await t.app.kernel.db
      .selectFrom('account_api_keys')
      .selectAll()
      .where('id', '=', created.body.data.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(stored.key_hash, created.body.data.key);
    assert.ok(!JSON.stringify(stored).includes(created.body.data.key));
    const list = await call(t, 'GET', `accounts/${account.id}/api-keys`, owner.headers);
    assert.equal(list.body.data.length, 1);
    assert.deepEqual(
      Object.keys(list.body.data[0]).sort(),
      [
        'accountId',
        'createdAt',
        'id',
        'keyPrefix',
        'lastFour',
        'lastUsedAt',
        'name',
        'ownerChainerId',
        'revokedAt',
      ].sort(),
    );
    assert.equal((await call(t, 'GET', `accounts/${account.id}/api-keys`, members.admin.headers)).body.data.length, 1);
    // a viewer sees only their own keys; another member's key is not found for them
    const adminKey = await call(t, 'POST', `accounts/${account.id}/api-keys`, members.admin.headers, { name: 'k2' });
    assert.equal((await call(t, 'GET', `accounts/${account.id}/api-keys`, members.viewer.headers)).body.data.length, 1);
    assert.equal(
      (await call(t, 'DELETE', `accounts/${account.id}/api-keys/${adminKey.body.data.id}`, members.viewer.headers))
        .status,
      404,
    );
    // an API key cannot mint keys
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/api-keys`, bearer(created.body.data.key), { name: 'k3' })).status,
      403,
    );
    // a key works only in its account
    const other = await makeTeam(t.app);
    await t.app.services.accounts.members.add(OPERATOR, other.account.id, {
      chainerId: members.viewer.user.id,
      role: 'viewer',
    });
    assert.equal((await call(t, 'GET', `accounts/${other.account.id}`, bearer(created.body.data.key))).status, 403);
    assert.equal((await call(t, 'GET', 'accounts/me', bearer(created.body.data.key))).body.data.id, account.id);
    const revoked = await call(
      t,
      'DELETE',
      `accounts/${account.id}/api-keys/${created.body.data.id}`,
      members.admin.headers,
    );
    assert.ok(revoked.body.data.revokedAt);
    assert.equal((await lastAudit(t.app, account.id, 'api_key.revoked')).targetId, created.body.data.id);
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, bearer(created.body.data.key))).status, 401);
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, bearer('gak_unknownkeyvalue'))).status, 401);
    assert.equal((await call(t, 'POST', `accounts/${account.id}/api-keys`, owner.headers, { name: '' })).status, 400);
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/api-keys`, owner.headers, { name: 'n'.repeat(121) })).status,
      400,
    );
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/api-keys`, owner.headers, { name: 'n'.repeat(120) })).status,
      201,
    );
  });

  it('the removed member sees nothing of the account afterwards', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['member']);
    await call(t, 'DELETE', `accounts/${account.id}/members/${members.member.user.id}`, owner.headers);
    const fresh = await t.app.services.identity.sessions.start(members.member.user.id);
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, bearer(fresh.accessToken))).status, 403);
    const stranger = await signedInUser(t.app);
    assert.equal((await call(t, 'GET', `accounts/${account.id}/members`, stranger.headers)).status, 403);
  });
});
