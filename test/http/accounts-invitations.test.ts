import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeTeam, makeUser, signedInUser, TEST_PASSWORD } from '../helpers/factories.js';
import { call, lastAudit } from '../helpers/accounts.js';
import { invitationBrowser } from '../helpers/invitation-page.js';
import { ManualClock } from '../../src/lib/clock.js';

let n = 0;
const email = () => `invitee-${Date.now().toString(36)}-${n++}@example.test`;

describe('accounts: invitations, workspaces, ownership transfer', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-04-01T09:00:00.000Z');
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  /** The token of the newest invitation mail to an address. */
  async function tokenFor(address: string): Promise<string> {
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', address)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(mail.kind, 'invitation');
    const match = /http:\/\/127\.0\.0\.1:8080\/invitations\/accept\?token=([A-Za-z0-9_-]+)/.exec(mail.body_text);
    assert.ok(match, mail.body_text);
    return decodeURIComponent(match[1]);
  }

  it('invites a new email: mail with a single-use link, audit member.invited with role; the invitee registers, signs in and accepts', async () => {
    const { owner, account } = await makeTeam(t.app);
    const address = email();
    const res = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
      email: address.toUpperCase(),
      role: 'analyst',
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.email, address);
    assert.equal(res.body.data.status, 'pending');
    assert.equal(res.body.data.expiresAt, new Date(clock.now().getTime() + 7 * 86_400_000).toISOString());
    const invited = await lastAudit(t.app, account.id, 'member.invited');
    assert.equal(invited.metadata.role, 'analyst');
    assert.equal(invited.metadata.email, address);
    const token = await tokenFor(address);
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: address, role: 'viewer' }))
        .status,
      409,
    );

    // someone else signed in cannot use it, and does not burn it
    const wrong = await signedInUser(t.app);
    const refused = await call(t, 'POST', 'invitations/accept', wrong.headers, { token });
    assert.equal(refused.status, 403);
    const invitee = await signedInUser(t.app, { email: address });
    const accepted = await call(t, 'POST', 'invitations/accept', invitee.headers, { token });
    assert.equal(accepted.status, 200);
    assert.equal(accepted.body.data.status, 'active');
    assert.equal(accepted.body.data.role, 'analyst');
    assert.equal(accepted.body.data.invitedBy, owner.user.id);
    assert.equal((await lastAudit(t.app, account.id, 'member.joined')).actorId, invitee.user.id);
    assert.equal((await lastAudit(t.app, account.id, 'invitation.accepted')).targetId, res.body.data.id);
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, invitee.headers)).body.data.role, 'analyst');
    // single use
    const again = await call(t, 'POST', 'invitations/accept', invitee.headers, { token });
    assert.equal(again.status, 410);
    assert.equal(again.body.error!.code, 'GONE');
    const list = await call(t, 'GET', `accounts/${account.id}/invitations`, owner.headers);
    assert.equal(list.body.data[0].status, 'accepted');
    assert.equal(list.body.meta.total, 1);
  });

  it('an existing user is held as invited (no access) and notified in-app without the link; accepting moves invited -> active', async () => {
    const { owner, account } = await makeTeam(t.app);
    const user = await signedInUser(t.app);
    const res = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
      email: user.user.email,
      role: 'viewer',
    });
    assert.equal(res.status, 201);
    const members = await call(t, 'GET', `accounts/${account.id}/members`, owner.headers);
    const held = members.body.data.find((m: { chainerId: string }) => m.chainerId === user.user.id);
    assert.equal(held.status, 'invited');
    assert.equal(held.joinedAt, null);
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, user.headers)).status, 403);
    const note = await t.app.kernel.db
      .selectFrom('notifications')
      .selectAll()
      .where('user_id', '=', user.user.id)
      .executeTakeFirstOrThrow();
    // the secret link goes by mail only
    assert.equal(note.action_url, null);
    const token = await tokenFor(user.user.email);
    assert.ok(!note.body.includes(token) && !note.title.includes(token));
    const accepted = await call(t, 'POST', 'invitations/accept', user.headers, { token });
    assert.equal(accepted.body.data.status, 'active');
    assert.ok(accepted.body.data.joinedAt);
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, user.headers)).status, 200);
    assert.equal(
      (
        await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
          email: user.user.email,
          role: 'viewer',
        })
      ).status,
      409,
    );
  });

  it('revoke removes the invited hold; resend replaces the link; expired links are gone', async () => {
    const { owner, account } = await makeTeam(t.app);
    const user = await signedInUser(t.app);
    const inv = (
      await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
        email: user.user.email,
        role: 'member',
      })
    ).body.data;
    const firstToken = await tokenFor(user.user.email);
    clock.advance(1000);
    const resent = await call(t, 'POST', `accounts/${account.id}/invitations/${inv.id}/resend`, owner.headers);
    assert.equal(resent.status, 200);
    assert.equal(resent.body.data.sentCount, 2);
    assert.equal((await lastAudit(t.app, account.id, 'invitation.resent')).metadata.sentCount, 2);
    const secondToken = await tokenFor(user.user.email);
    assert.notEqual(firstToken, secondToken);
    assert.equal((await call(t, 'POST', 'invitations/accept', user.headers, { token: firstToken })).status, 410);

    const revoked = await call(t, 'DELETE', `accounts/${account.id}/invitations/${inv.id}`, owner.headers);
    assert.equal(revoked.body.data.status, 'revoked');
    assert.equal((await lastAudit(t.app, account.id, 'invitation.revoked')).targetId, inv.id);
    assert.equal(
      await t.app.kernel.db
        .selectFrom('account_members')
        .select('user_id')
        .where('account_id', '=', account.id)
        .where('user_id', '=', user.user.id)
        .executeTakeFirst(),
      undefined,
    );
    assert.equal((await call(t, 'POST', 'invitations/accept', user.headers, { token: secondToken })).status, 410);
    assert.equal((await call(t, 'DELETE', `accounts/${account.id}/invitations/${inv.id}`, owner.headers)).status, 409);
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/invitations/${inv.id}/resend`, owner.headers)).status,
      409,
    );

    const address = email();
    const late = (
      await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: address, role: 'member' })
    ).body.data;
    const lateToken = await tokenFor(address);
    clock.advance(7 * 86_400_000);
    // a week later the owner signs in again (session access tokens last an hour)
    const ownerNow = {
      authorization: `Bearer ${(await t.app.services.identity.sessions.start(owner.user.id)).accessToken}`,
    };
    const listed = await call(t, 'GET', `accounts/${account.id}/invitations`, ownerNow);
    assert.equal(listed.body.data.find((i: { id: string }) => i.id === late.id).status, 'expired');
    const invitee = await signedInUser(t.app, { email: address });
    assert.equal((await call(t, 'POST', 'invitations/accept', invitee.headers, { token: lateToken })).status, 410);
    // an expired invitation can be resent, which restarts its period
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/invitations/${late.id}/resend`, ownerNow)).body.data.status,
      'pending',
    );
    assert.equal(
      (await call(t, 'POST', 'invitations/accept', invitee.headers, { token: await tokenFor(address) })).status,
      200,
    );
  });

  it('inviting again after the old invitation expired supersedes it: revoking the old one cannot drop the new hold', async () => {
    const { owner, account } = await makeTeam(t.app);
    const user = await signedInUser(t.app);
    const first = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
      email: user.user.email,
      role: 'viewer',
    });
    assert.equal(first.status, 201);
    clock.advance(8 * 86_400_000);
    // A week later: both sign in again.
    const again = async (userId: string) => ({
      authorization: `Bearer ${(await t.app.services.identity.sessions.start(userId)).accessToken}`,
    });
    owner.headers = await again(owner.user.id);
    user.headers = await again(user.user.id);
    const second = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
      email: user.user.email,
      role: 'analyst',
    });
    assert.equal(second.status, 201);
    assert.equal(
      (await call(t, 'DELETE', `accounts/${account.id}/invitations/${first.body.data.id}`, owner.headers)).status,
      409,
    );
    const members = await call(t, 'GET', `accounts/${account.id}/members`, owner.headers);
    const held = members.body.data.find((m: { chainerId: string }) => m.chainerId === user.user.id);
    assert.equal(held.status, 'invited');
    assert.equal(held.role, 'analyst');
    const accepted = await call(t, 'POST', 'invitations/accept', user.headers, {
      token: await tokenFor(user.user.email),
    });
    assert.equal(accepted.body.data.status, 'active');
  });

  it('validates invitation input: email and assignable role', async () => {
    const { owner, account } = await makeTeam(t.app);
    assert.equal(
      (
        await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
          email: 'not-an-email',
          role: 'member',
        })
      ).status,
      400,
    );
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: email(), role: 'owner' }))
        .status,
      400,
    );
    assert.equal((await call(t, 'POST', 'invitations/accept', owner.headers, { token: 'short' })).status, 400);
    assert.equal((await call(t, 'POST', 'invitations/accept', {}, { token: 'x'.repeat(20) })).status, 401);
  });

  it('the accept page: GET names the invitation and asks to sign in; signed in, one button accepts (docs/accounts.md)', async () => {
    const { owner, account } = await makeTeam(t.app);
    const address = email();
    await makeUser(t.app, { email: address });
    await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: address, role: 'billing' });
    const token = await tokenFor(address);
    const browser = invitationBrowser(t, token);
    const page = await browser.open();
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    assert.match(page.payload, /<h1>Join [^<]+<\/h1>/);
    assert.match(page.payload, /name="password"/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal((await t.inject('/invitations/accept')).statusCode, 400);
    const wrong = await browser.signIn(address, 'wrong password');
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.payload, /Wrong email or password/);
    assert.equal((await browser.signIn(address, TEST_PASSWORD)).statusCode, 303);
    const done = await browser.accept();
    assert.equal(done.statusCode, 200);
    assert.match(done.payload, /You are now a member of/);
    assert.match(done.payload, /billing/);
    assert.equal((await browser.accept()).statusCode, 410);
  });

  it('workspaces: default plus more; rename, delete (not the default), memberships; X-Workspace-Id selects one', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['admin', 'member']);
    const list = await call(t, 'GET', `accounts/${account.id}/workspaces`, owner.headers);
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].isDefault, true);
    const created = await call(t, 'POST', `accounts/${account.id}/workspaces`, members.admin.headers, {
      name: 'Research',
    });
    assert.equal(created.status, 201);
    const wsId = created.body.data.id;
    assert.equal((await lastAudit(t.app, account.id, 'workspace.created')).metadata.name, 'Research');
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/workspaces`, owner.headers, { name: 'research' })).status,
      409,
    );
    assert.equal((await call(t, 'POST', `accounts/${account.id}/workspaces`, owner.headers, { name: '' })).status, 400);
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/workspaces`, owner.headers, { name: 'w'.repeat(121) })).status,
      400,
    );
    // a plain member does not see a workspace they do not belong to
    assert.equal(
      (await call(t, 'GET', `accounts/${account.id}/workspaces`, members.member.headers)).body.data.length,
      1,
    );
    const principal = {
      userId: members.member.user.id,
      kind: 'session' as const,
      scopes: null,
      clientId: null,
      sessionId: null,
      accountId: null,
      tokenId: null,
    };
    await assert.rejects(t.app.services.accounts.access.workspace(principal, { workspaceId: wsId }), { status: 404 });
    const added = await call(t, 'POST', `accounts/${account.id}/workspaces/${wsId}/members`, owner.headers, {
      chainerId: members.member.user.id,
      role: 'viewer',
    });
    assert.equal(added.status, 201);
    assert.equal(added.body.data.workspaceRole, 'viewer');
    assert.equal((await lastAudit(t.app, account.id, 'workspace.member_added')).targetId, members.member.user.id);
    assert.equal((await t.app.services.accounts.access.workspace(principal, { workspaceId: wsId })).workspaceId, wsId);
    assert.equal(
      (
        await call(t, 'POST', `accounts/${account.id}/workspaces/${wsId}/members`, owner.headers, {
          chainerId: members.member.user.id,
        })
      ).status,
      409,
    );
    const outsider = await makeUser(t.app);
    assert.equal(
      (
        await call(t, 'POST', `accounts/${account.id}/workspaces/${wsId}/members`, owner.headers, {
          chainerId: outsider.id,
        })
      ).status,
      400,
    );
    assert.equal(
      (await call(t, 'GET', `accounts/${account.id}/workspaces/${wsId}/members`, members.member.headers)).body.data
        .length,
      2,
    );
    const renamed = await call(t, 'PATCH', `accounts/${account.id}/workspaces/${wsId}`, owner.headers, { name: 'Lab' });
    assert.equal(renamed.body.data.name, 'Lab');
    assert.deepEqual((await lastAudit(t.app, account.id, 'workspace.renamed')).metadata, {
      oldValue: 'Research',
      newValue: 'Lab',
    });
    const removedMember = await call(
      t,
      'DELETE',
      `accounts/${account.id}/workspaces/${wsId}/members/${members.member.user.id}`,
      owner.headers,
    );
    assert.equal(removedMember.status, 200);
    assert.equal((await lastAudit(t.app, account.id, 'workspace.member_removed')).targetId, members.member.user.id);
    assert.equal(
      (
        await call(
          t,
          'DELETE',
          `accounts/${account.id}/workspaces/${wsId}/members/${members.member.user.id}`,
          owner.headers,
        )
      ).status,
      404,
    );
    const refused = await call(
      t,
      'DELETE',
      `accounts/${account.id}/workspaces/${account.defaultWorkspaceId}`,
      owner.headers,
    );
    assert.equal(refused.status, 409);
    assert.equal((await call(t, 'DELETE', `accounts/${account.id}/workspaces/${wsId}`, owner.headers)).status, 200);
    assert.equal((await lastAudit(t.app, account.id, 'workspace.deleted')).targetId, wsId);
    assert.equal(
      (await call(t, 'GET', `accounts/${account.id}/workspaces/${wsId}/members`, owner.headers)).status,
      404,
    );
    const foreign = await makeTeam(t.app);
    assert.equal(
      (
        await call(
          t,
          'PATCH',
          `accounts/${account.id}/workspaces/${foreign.account.defaultWorkspaceId}`,
          owner.headers,
          { name: 'x' },
        )
      ).status,
      404,
    );
  });

  it('ownership transfer: propose, accept by the new owner (previous owner becomes admin), cancel', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['admin', 'member']);
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/ownership-transfer`, owner.headers, { chainerId: owner.user.id }))
        .status,
      400,
    );
    assert.equal(
      (
        await call(t, 'POST', `accounts/${account.id}/ownership-transfer`, owner.headers, {
          chainerId: (await makeUser(t.app)).id,
        })
      ).status,
      400,
    );
    const proposed = await call(t, 'POST', `accounts/${account.id}/ownership-transfer`, owner.headers, {
      chainerId: members.member.user.id,
    });
    assert.equal(proposed.status, 201);
    assert.equal(proposed.body.data.status, 'pending');
    assert.equal((await lastAudit(t.app, account.id, 'ownership.transfer_proposed')).targetId, members.member.user.id);
    assert.equal(
      (
        await call(t, 'POST', `accounts/${account.id}/ownership-transfer`, owner.headers, {
          chainerId: members.admin.user.id,
        })
      ).status,
      409,
    );
    assert.equal(
      (await call(t, 'GET', `accounts/${account.id}/ownership-transfer`, members.admin.headers)).body.data.toChainerId,
      members.member.user.id,
    );
    // only the proposed owner accepts
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/ownership-transfer/accept`, members.admin.headers)).status,
      403,
    );
    // cancel by the owner
    const cancelled = await call(t, 'DELETE', `accounts/${account.id}/ownership-transfer`, owner.headers);
    assert.equal(cancelled.body.data.status, 'cancelled');
    assert.equal((await lastAudit(t.app, account.id, 'ownership.transfer_cancelled')).metadata.by, 'owner');
    assert.equal(
      (await call(t, 'POST', `accounts/${account.id}/ownership-transfer/accept`, members.member.headers)).status,
      404,
    );
    // propose again and accept
    await call(t, 'POST', `accounts/${account.id}/ownership-transfer`, owner.headers, {
      chainerId: members.member.user.id,
    });
    const accepted = await call(t, 'POST', `accounts/${account.id}/ownership-transfer/accept`, members.member.headers);
    assert.equal(accepted.status, 200);
    assert.equal(accepted.body.data.status, 'accepted');
    assert.deepEqual(
      (await lastAudit(t.app, account.id, 'ownership.transfer_accepted')).metadata.fromChainerId,
      owner.user.id,
    );
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, members.member.headers)).body.data.role, 'owner');
    assert.equal((await call(t, 'GET', `accounts/${account.id}`, owner.headers)).body.data.role, 'admin');
    // the previous owner can no longer delete; the new one can
    assert.equal((await call(t, 'DELETE', `accounts/${account.id}`, owner.headers)).status, 403);
    assert.equal((await call(t, 'DELETE', `accounts/${account.id}`, members.member.headers)).status, 200);
  });
});
