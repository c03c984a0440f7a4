import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, makeTeam, makeUser, signedInUser, TEST_PASSWORD } from '../helpers/factories.js';
import { call } from '../helpers/accounts.js';
import { ManualClock } from '../../src/lib/clock.js';

let n = 0;
const address = (tag: string) => `${tag}-${Date.now().toString(36)}-${n++}@acme.example`;

/** Attacks on the accounts domain, each replayed through the API and now refused. */
describe('accounts: security', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-04T09:00:00.000Z');
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  /** The newest mail of a kind to an address. */
  async function mailTo(to: string, kind: string) {
    return t.app.kernel.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', to).where('kind', '=', kind).orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirstOrThrow();
  }
  const tokenIn = (text: string) => decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(text)![1]);

  /** Registers through the API (unconfirmed) and signs in through the API. */
  async function registerAndLogin(email: string, password: string, fullName?: string) {
    const reg = await call(t, 'POST', 'auth/register', {}, { email, password, ...(fullName === undefined ? {} : { fullName }) });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    assert.equal(reg.body.data.user.emailVerified, false);
    const login = await call(t, 'POST', 'auth/login', {}, { email, password });
    assert.equal(login.status, 200);
    return { id: reg.body.data.user.id as string, headers: bearer(login.body.data.accessToken as string) };
  }

  describe('invitation hijack through an unconfirmed pre-registration', () => {
    it('the invitee squatter never sees the link, holds no seat, and cannot accept with the mailed token until the address is confirmed', async () => {
      const { owner, account } = await makeTeam(t.app);
      const email = address('dana');
      const attacker = await registerAndLogin(email, 'attacker-pass-1');
      const invited = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email, role: 'admin' });
      assert.equal(invited.status, 201);

      // the attack read the link from the in-app notifications: there is none for an unconfirmed address
      const notes = await call(t, 'GET', 'notifications', attacker.headers);
      assert.equal(notes.status, 200);
      assert.ok(!JSON.stringify(notes.body.data).includes('invitations/accept'), JSON.stringify(notes.body.data));
      const rows = await t.app.kernel.db.selectFrom('notifications').selectAll().where('user_id', '=', attacker.id).execute();
      assert.deepEqual(rows.filter((r) => (r.action_url ?? '').includes('token=') || r.body.includes('token=')), []);
      // and no invited membership was made for the unconfirmed user
      assert.equal(await t.app.kernel.db.selectFrom('account_members').select('user_id').where('account_id', '=', account.id).where('user_id', '=', attacker.id).executeTakeFirst(), undefined);

      // even holding the mailed token, an unconfirmed address cannot accept; the link is not burnt
      const token = tokenIn((await mailTo(email, 'invitation')).body_text);
      const refused = await call(t, 'POST', 'invitations/accept', attacker.headers, { token });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error!.code, 'EMAIL_NOT_CONFIRMED');
      assert.equal((await call(t, 'GET', `accounts/${account.id}/logs`, attacker.headers)).status, 403);
      const page = await t.inject({ method: 'POST', url: '/invitations/accept', payload: new URLSearchParams({ token, email, password: 'attacker-pass-1' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(page.statusCode, 403);
      assert.match(page.payload, /Confirm your email address first/);
      const member = await t.app.kernel.db.selectFrom('account_members').select('status').where('account_id', '=', account.id).where('user_id', '=', attacker.id).executeTakeFirst();
      assert.equal(member, undefined);
      const invitation = await t.app.kernel.db.selectFrom('account_invitations').select('status').where('id', '=', invited.body.data.id).executeTakeFirstOrThrow();
      assert.equal(invitation.status, 'pending');

      // whoever reads the mailbox confirms the address; then the same link works
      const confirm = await call(t, 'POST', 'auth/confirm-email', {}, { token: tokenIn((await mailTo(email, 'email_confirmation')).body_text) });
      assert.equal(confirm.status, 200);
      const accepted = await call(t, 'POST', 'invitations/accept', attacker.headers, { token });
      assert.equal(accepted.status, 200);
      assert.equal(accepted.body.data.role, 'admin');
    });

    it('a confirmed invitee is told in-app that a mail is waiting, without the link', async () => {
      const { owner, account } = await makeTeam(t.app);
      const invitee = await signedInUser(t.app, { email: address('erin') });
      assert.equal((await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: invitee.user.email, role: 'viewer' })).status, 201);
      const notes = await call(t, 'GET', 'notifications', invitee.headers);
      assert.equal(notes.body.data.length, 1);
      assert.equal(notes.body.data[0].actionUrl, null);
      assert.match(notes.body.data[0].body, /invitation mail sent to/);
      const token = tokenIn((await mailTo(invitee.user.email, 'invitation')).body_text);
      assert.ok(!JSON.stringify(notes.body.data).includes(token));
    });
  });

  describe('the invitation page as a password oracle', () => {
    /** The accept form from one client address, so its budgets are this test's alone. */
    const form = (ip: string, fields: Record<string, string>) =>
      t.inject({ method: 'POST', url: '/invitations/accept', remoteAddress: ip, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const login = (ip: string, email: string, password: string) => t.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: ip, payload: { email, password } });

    it('a bogus token gets the same 410 whether the password is right or wrong', async () => {
      const victim = await makeUser(t.app, { email: address('paul') });
      const bogus = 'x'.repeat(43);
      const right = await form('10.0.3.1', { token: bogus, email: victim.email, password: TEST_PASSWORD });
      const wrong = await form('10.0.3.1', { token: bogus, email: victim.email, password: 'not the password' });
      assert.equal(right.statusCode, 410);
      assert.equal(wrong.statusCode, 410);
      assert.equal(right.payload, wrong.payload);
    });

    it('with a live link, password guesses spend the login budget, and an exhausted login budget stops the page', async () => {
      const { owner, account } = await makeTeam(t.app);
      const invitee = await makeUser(t.app, { email: address('gina') });
      await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: invitee.email, role: 'viewer' });
      const token = tokenIn((await mailTo(invitee.email, 'invitation')).body_text);
      const limit = 8; // the login row of the sign-in limits
      for (let i = 0; i < limit; i++) assert.equal((await form('10.0.3.2', { token, email: invitee.email, password: `guess-${i}-wrong` })).statusCode, 401);
      const blocked = await login('10.0.3.2', invitee.email, TEST_PASSWORD);
      assert.equal(blocked.statusCode, 429);
      assert.equal(JSON.parse(blocked.payload).error.code, 'RATE_LIMIT_EXCEEDED');
      const page = await form('10.0.3.2', { token, email: invitee.email, password: TEST_PASSWORD });
      assert.equal(page.statusCode, 429);
      assert.ok(Number(page.headers['retry-after']) > 0);
      // the refusal used nothing: the link still accepts from a fresh budget
      clock.advance(61_000);
      const done = await form('10.0.3.2', { token, email: invitee.email, password: TEST_PASSWORD });
      assert.equal(done.statusCode, 200, done.payload);
    });

    it('sign-in attempts at /auth/login leave the page no budget of its own', async () => {
      const { owner, account } = await makeTeam(t.app);
      const invitee = await makeUser(t.app, { email: address('hugo') });
      await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: invitee.email, role: 'viewer' });
      const token = tokenIn((await mailTo(invitee.email, 'invitation')).body_text);
      for (let i = 0; i < 8; i++) assert.equal((await login('10.0.3.3', invitee.email, `guess-${i}-wrong`)).statusCode, 401);
      const page = await form('10.0.3.3', { token, email: invitee.email, password: TEST_PASSWORD });
      assert.equal(page.statusCode, 429);
      assert.equal((await t.app.kernel.db.selectFrom('account_invitations').select('status').where('email', '=', invitee.email).executeTakeFirstOrThrow()).status, 'pending');
    });
  });
});
