import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, makeTeam, makeUser, signedInUser, TEST_PASSWORD } from '../helpers/factories.js';
import { call } from '../helpers/accounts.js';
import { invitationBrowser } from '../helpers/invitation-page.js';
import { ManualClock } from '../../src/lib/clock.js';
import {
  authorizeAndAllow,
  authorizeQuery,
  basic,
  form,
  FORM_HEADERS,
  makeClient,
  pkcePair,
  REDIRECT,
} from '../helpers/oauth.js';

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
    return t.app.kernel.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', to)
      .where('kind', '=', kind)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
  }
  const tokenIn = (text: string) => decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(text)![1]);

  /** Registers through the API (unconfirmed) and signs in through the API. */
  async function registerAndLogin(email: string, password: string, fullName?: string) {
    const reg = await call(
      t,
      'POST',
      'auth/register',
      {},
      { email, password, ...(fullName === undefined ? {} : { fullName }) },
    );
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
      const invited = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
        email,
        role: 'admin',
      });
      assert.equal(invited.status, 201);

      // the attack read the link from the in-app notifications: there is none for an unconfirmed address
      const notes = await call(t, 'GET', 'notifications', attacker.headers);
      assert.equal(notes.status, 200);
      assert.ok(!JSON.stringify(notes.body.data).includes('invitations/accept'), JSON.stringify(notes.body.data));
      const rows = await t.app.kernel.db
        .selectFrom('notifications')
        .selectAll()
        .where('user_id', '=', attacker.id)
        .execute();
      assert.deepEqual(
        rows.filter((r) => (r.action_url ?? '').includes('token=') || r.body.includes('token=')),
        [],
      );
      // and no invited membership was made for the unconfirmed user
      assert.equal(
        await t.app.kernel.db
          .selectFrom('account_members')
          .select('user_id')
          .where('account_id', '=', account.id)
          .where('user_id', '=', attacker.id)
          .executeTakeFirst(),
        undefined,
      );

      // even holding the mailed token, an unconfirmed address cannot accept; the link is not burnt
      const token = tokenIn((await mailTo(email, 'invitation')).body_text);
      const refused = await call(t, 'POST', 'invitations/accept', attacker.headers, { token });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error!.code, 'FORBIDDEN');
      assert.deepEqual(refused.body.error!.details, [
        { field: 'email', message: 'the email address is not confirmed', type: 'email_not_confirmed' },
      ]);
      assert.match(refused.body.error!.message, /Confirm your email address first/);
      assert.equal((await call(t, 'GET', `accounts/${account.id}/logs`, attacker.headers)).status, 403);
      // the page: signing in works (it is their password), accepting does not
      const browser = invitationBrowser(t, token, '10.0.2.9');
      assert.equal((await browser.signIn(email, 'attacker-pass-1')).statusCode, 303);
      const page = await browser.accept();
      assert.equal(page.statusCode, 403);
      assert.match(page.payload, /Confirm your email address first/);
      assert.match(page.payload, /<a href="\/auth\/confirm-email\/resend">Email me a new confirmation link<\/a>/);
      const member = await t.app.kernel.db
        .selectFrom('account_members')
        .select('status')
        .where('account_id', '=', account.id)
        .where('user_id', '=', attacker.id)
        .executeTakeFirst();
      assert.equal(member, undefined);
      const invitation = await t.app.kernel.db
        .selectFrom('account_invitations')
        .select('status')
        .where('id', '=', invited.body.data.id)
        .executeTakeFirstOrThrow();
      assert.equal(invitation.status, 'pending');

      // whoever reads the mailbox confirms the address; then the same link works
      const confirm = await call(
        t,
        'POST',
        'auth/confirm-email',
        {},
        { token: tokenIn((await mailTo(email, 'email_confirmation')).body_text) },
      );
      assert.equal(confirm.status, 200);
      const accepted = await call(t, 'POST', 'invitations/accept', attacker.headers, { token });
      assert.equal(accepted.status, 200);
      assert.equal(accepted.body.data.role, 'admin');
    });

    it('a confirmed invitee is told in-app that a mail is waiting, without the link', async () => {
      const { owner, account } = await makeTeam(t.app);
      const invitee = await signedInUser(t.app, { email: address('erin') });
      assert.equal(
        (
          await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
            email: invitee.user.email,
            role: 'viewer',
          })
        ).status,
        201,
      );
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
    /** The page's sign-in form, posted by a browser at this address (it opens the page first for its CSRF value). */
    const form = (ip: string, fields: { token: string; email: string; password: string }) =>
      invitationBrowser(t, fields.token, ip).signIn(fields.email, fields.password);
    /** The reference (the request id) differs from answer to answer; the rest must not. */
    const unreferenced = (html: string) => html.replace(/<code>[^<]*<\/code>/g, '<code></code>');
    const login = (ip: string, email: string, password: string) =>
      t.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: ip, payload: { email, password } });

    it('a bogus token gets the same 410 whether the password is right or wrong', async () => {
      const victim = await makeUser(t.app, { email: address('paul') });
      const bogus = 'x'.repeat(43);
      const right = await form('10.0.3.1', { token: bogus, email: victim.email, password: TEST_PASSWORD });
      const wrong = await form('10.0.3.1', { token: bogus, email: victim.email, password: 'not the password' });
      assert.equal(right.statusCode, 410);
      assert.equal(wrong.statusCode, 410);
      assert.equal(unreferenced(right.payload), unreferenced(wrong.payload));
    });

    it('with a live link, password guesses spend the login budget, and an exhausted login budget stops the page', async () => {
      const { owner, account } = await makeTeam(t.app);
      const invitee = await makeUser(t.app, { email: address('gina') });
      await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
        email: invitee.email,
        role: 'viewer',
      });
      const token = tokenIn((await mailTo(invitee.email, 'invitation')).body_text);
      const limit = 8; // the login row of the sign-in limits
      for (let i = 0; i < limit; i++)
        assert.equal(
          (await form('10.0.3.2', { token, email: invitee.email, password: `guess-${i}-wrong` })).statusCode,
          401,
        );
      const blocked = await login('10.0.3.2', invitee.email, TEST_PASSWORD);
      assert.equal(blocked.statusCode, 429);
      assert.equal(JSON.parse(blocked.payload).error.code, 'RATE_LIMIT_EXCEEDED');
      const page = await form('10.0.3.2', { token, email: invitee.email, password: TEST_PASSWORD });
      assert.equal(page.statusCode, 429);
      // the login budget's headers, as /auth/login answers them
      assert.equal(page.headers['x-ratelimit-limit'], String(limit));
      assert.equal(page.headers['x-ratelimit-remaining'], '0');
      assert.equal(page.headers['x-ratelimit-reset'], blocked.headers['x-ratelimit-reset']);
      const nowSec = Math.floor(clock.now().getTime() / 1000);
      assert.equal(page.headers['retry-after'], String(Number(page.headers['x-ratelimit-reset']) - nowSec));
      assert.ok(Number(page.headers['retry-after']) > 0);
      // the refusal used nothing: the link still accepts from a fresh budget
      clock.advance(61_000);
      const browser = invitationBrowser(t, token, '10.0.3.2');
      assert.equal((await browser.signIn(invitee.email, TEST_PASSWORD)).statusCode, 303);
      const done = await browser.accept();
      assert.equal(done.statusCode, 200, done.payload);
      assert.match(done.payload, /You are now a member of/);
    });

    it('sign-in attempts at /auth/login leave the page no budget of its own', async () => {
      const { owner, account } = await makeTeam(t.app);
      const invitee = await makeUser(t.app, { email: address('hugo') });
      await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
        email: invitee.email,
        role: 'viewer',
      });
      const token = tokenIn((await mailTo(invitee.email, 'invitation')).body_text);
      for (let i = 0; i < 8; i++)
        assert.equal((await login('10.0.3.3', invitee.email, `guess-${i}-wrong`)).statusCode, 401);
      const page = await form('10.0.3.3', { token, email: invitee.email, password: TEST_PASSWORD });
      assert.equal(page.statusCode, 429);
      assert.equal(
        (
          await t.app.kernel.db
            .selectFrom('account_invitations')
            .select('status')
            .where('email', '=', invitee.email)
            .executeTakeFirstOrThrow()
        ).status,
        'pending',
      );
    });
  });

  describe('invitation mail as a spam and phishing relay', () => {
    const PHISH_NAME =
      'IT Security Team\n\nYour mailbox will be suspended today. Verify now: https://gantry-verify.example/login\n\nRegards,';
    const PHISH_ACCOUNT =
      'Payroll\n\nACTION REQUIRED: confirm your salary details at https://payroll-update.example before Friday.\n';

    it('an unconfirmed user cannot send invitations (403 FORBIDDEN with an email_not_confirmed detail, no mail queued)', async () => {
      const sender = await registerAndLogin(address('mallory'), 'mallory-pass-1', 'Mallory');
      const created = await call(t, 'POST', 'accounts', sender.headers, {
        slug: `m-${Date.now().toString(36)}-${n++}`,
        legalName: 'Mallory Ltd',
      });
      assert.equal(created.status, 201);
      const target = address('outside');
      const res = await call(t, 'POST', `accounts/${created.body.data.id}/invitations`, sender.headers, {
        email: target,
        role: 'member',
      });
      assert.equal(res.status, 403);
      assert.equal(res.body.error!.code, 'FORBIDDEN');
      assert.deepEqual(res.body.error!.details, [
        { field: 'email', message: 'the email address is not confirmed', type: 'email_not_confirmed' },
      ]);
      assert.match(res.body.error!.message, /Confirm your email address before sending invitations/);
      assert.equal(
        (await t.app.kernel.db.selectFrom('mail_outbox').select('id').where('to_address', '=', target).execute())
          .length,
        0,
      );
      assert.equal(
        (await t.app.kernel.db.selectFrom('account_invitations').select('id').where('email', '=', target).execute())
          .length,
        0,
      );
    });

    it('multi-line names are refused at registration and on accounts (400 VALIDATION_FAILED)', async () => {
      const reg = await call(
        t,
        'POST',
        'auth/register',
        {},
        { email: address('phish'), password: 'phish-pass-1', fullName: PHISH_NAME },
      );
      assert.equal(reg.status, 400);
      assert.equal(reg.body.error!.code, 'VALIDATION_FAILED');
      assert.match(reg.body.error!.message, /single line/);
      const { owner, account } = await makeTeam(t.app);
      const create = await call(t, 'POST', 'accounts', owner.headers, {
        slug: `p-${Date.now().toString(36)}-${n++}`,
        legalName: PHISH_ACCOUNT,
      });
      assert.equal(create.status, 400);
      assert.equal(create.body.error!.code, 'VALIDATION_FAILED');
      for (const field of ['legalName', 'displayName', 'industry']) {
        const patch = await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, {
          [field]: 'Acme\u2028Click https://x.example',
        });
        assert.equal(patch.status, 400, field);
        assert.equal(patch.body.error!.code, 'VALIDATION_FAILED');
      }
      const rtl = await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, {
        displayName: 'Acme \u202Egnp.exe',
      });
      assert.equal(rtl.status, 400);
      // an ordinary name with accents and emoji is fine
      assert.equal(
        (await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, { displayName: 'Zoë & Co 🚀' })).status,
        200,
      );
      await assert.rejects(
        t.app.services.identity.createUser({ email: address('cli'), password: 'cli-pass-123', fullName: 'a\nb' }),
        { code: 'VALIDATION_FAILED' },
      );
    });

    it('names stored before the rule reach the mail as one capped line', async () => {
      const { owner, account } = await makeTeam(t.app);
      await t.app.kernel.db
        .updateTable('users')
        .set({ full_name: PHISH_NAME })
        .where('id', '=', owner.user.id)
        .execute();
      await t.app.kernel.db
        .updateTable('accounts')
        .set({ display_name: PHISH_ACCOUNT + 'x'.repeat(200) })
        .where('id', '=', account.id)
        .execute();
      const target = address('reader');
      assert.equal(
        (await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: target })).status,
        201,
      );
      const mail = await mailTo(target, 'invitation');
      assert.ok(!/[\r\n]/.test(mail.subject), mail.subject);
      assert.ok(mail.subject.length < 120, mail.subject);
      const firstParagraph = mail.body_text.split('\n\n')[0];
      assert.match(
        firstParagraph,
        /^IT Security Team Your mailbox will be suspended today\. Verify now: \S+… invited you to join the account "Payroll ACTION REQUIRED: [^"]+…" on Gantry as member\.$/,
      );
      assert.ok(!firstParagraph.includes('\n'));
      assert.ok(firstParagraph.includes('…'));
      assert.equal(mail.body_text.split('\n\n').length, 3, mail.body_text);
    });

    it('resends stop at 3 mails from one account to one recipient a day (429 RATE_LIMIT_EXCEEDED, counted from the audit log)', async () => {
      const { owner, account } = await makeTeam(t.app);
      const target = address('spam');
      const hour = 3600 * 1000;
      const start = clock.now().getTime();
      // the clock moves by hours here: each request signs in afresh
      const asOwner = async () => bearer((await t.app.services.identity.sessions.start(owner.user.id)).accessToken);
      const invited = await call(t, 'POST', `accounts/${account.id}/invitations`, await asOwner(), { email: target });
      assert.equal(invited.status, 201);
      const resend = async () =>
        call(t, 'POST', `accounts/${account.id}/invitations/${invited.body.data.id}/resend`, await asOwner());
      clock.advance(hour);
      assert.equal((await resend()).status, 200);
      clock.advance(hour);
      assert.equal((await resend()).status, 200);
      const over = await resend();
      assert.equal(over.status, 429);
      assert.equal(over.body.error!.code, 'RATE_LIMIT_EXCEEDED');
      assert.deepEqual(over.body.error!.details, { quota: 'recipient', limit: 3, windowSec: 86400 });
      assert.equal(over.headers['retry-after'], String(22 * 3600));
      assert.equal(
        (await t.app.kernel.db.selectFrom('mail_outbox').select('id').where('to_address', '=', target).execute())
          .length,
        3,
      );
      const row = await t.app.kernel.db
        .selectFrom('account_invitations')
        .select('sent_count')
        .where('id', '=', invited.body.data.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.sent_count, 3);
      // another account's quota for that address is its own
      const other = await makeTeam(t.app);
      const again = await call(
        t,
        'POST',
        `accounts/${other.account.id}/invitations`,
        bearer((await t.app.services.identity.sessions.start(other.owner.user.id)).accessToken),
        { email: target },
      );
      assert.equal(again.status, 201, JSON.stringify(again.body));
      // a day after the first mail, one more may go, and then the next waits again
      clock.set(new Date(start + 24 * hour + 1000));
      assert.equal((await resend()).status, 200);
      assert.equal((await resend()).status, 429);
    });

    it('a throwaway account that spent its 3 mails to an address leaves the real inviter free; 10 mails a day from all accounts together is the cap', async () => {
      const target = address('victim');
      const invitationsTo = async () =>
        (
          await t.app.kernel.db
            .selectFrom('mail_outbox')
            .select('id')
            .where('to_address', '=', target)
            .where('kind', '=', 'invitation')
            .execute()
        ).length;
      const throwaway = await makeTeam(t.app);
      const first = await call(t, 'POST', `accounts/${throwaway.account.id}/invitations`, throwaway.owner.headers, {
        email: target,
      });
      assert.equal(first.status, 201);
      const resend = () =>
        call(
          t,
          'POST',
          `accounts/${throwaway.account.id}/invitations/${first.body.data.id}/resend`,
          throwaway.owner.headers,
        );
      assert.equal((await resend()).status, 200);
      assert.equal((await resend()).status, 200);
      const spent = await resend();
      assert.equal(spent.status, 429);
      assert.equal((spent.body.error!.details as { quota: string }).quota, 'recipient');

      // the employer still invites the address
      const employer = await makeTeam(t.app);
      const real = await call(t, 'POST', `accounts/${employer.account.id}/invitations`, employer.owner.headers, {
        email: target,
      });
      assert.equal(real.status, 201, JSON.stringify(real.body));
      assert.equal(await invitationsTo(), 4);

      // more accounts spraying the same address stop at 10 mails in all
      const sprayers = [await makeTeam(t.app), await makeTeam(t.app), await makeTeam(t.app)];
      for (const team of sprayers.slice(0, 2)) {
        const sent = await call(t, 'POST', `accounts/${team.account.id}/invitations`, team.owner.headers, {
          email: target,
        });
        assert.equal(sent.status, 201);
        for (let i = 0; i < 2; i++)
          assert.equal(
            (
              await call(
                t,
                'POST',
                `accounts/${team.account.id}/invitations/${sent.body.data.id}/resend`,
                team.owner.headers,
              )
            ).status,
            200,
          );
      }
      assert.equal(await invitationsTo(), 10);
      const eleventh = await call(
        t,
        'POST',
        `accounts/${sprayers[2].account.id}/invitations`,
        sprayers[2].owner.headers,
        { email: target },
      );
      assert.equal(eleventh.status, 429);
      assert.equal(eleventh.body.error!.code, 'RATE_LIMIT_EXCEEDED');
      assert.deepEqual(eleventh.body.error!.details, { quota: 'recipientAllAccounts', limit: 10, windowSec: 86400 });
      assert.equal(eleventh.headers['retry-after'], String(24 * 3600));
      assert.equal(await invitationsTo(), 10);
      assert.equal(
        (
          await t.app.kernel.db
            .selectFrom('account_invitations')
            .select('id')
            .where('account_id', '=', sprayers[2].account.id)
            .execute()
        ).length,
        0,
      );
      // the employer's own resend is refused by the same cap
      assert.equal(
        (
          await call(
            t,
            'POST',
            `accounts/${employer.account.id}/invitations/${real.body.data.id}/resend`,
            employer.owner.headers,
          )
        ).status,
        429,
      );
    });

    it('an account sends at most 50 invitation mails a day', async () => {
      const { owner, account } = await makeTeam(t.app);
      for (let i = 0; i < 50; i++)
        assert.equal(
          (await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: address(`bulk${i}`) }))
            .status,
          201,
        );
      const over = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, {
        email: address('bulk-last'),
      });
      assert.equal(over.status, 429);
      assert.equal(over.body.error!.code, 'RATE_LIMIT_EXCEEDED');
      assert.equal((over.body.error!.details as { quota: string }).quota, 'account');
    });
  });

  describe('direct member add and removal', () => {
    it('adding a user by id (e.g. an OAuth sub) discloses no email: not in the answer, the member list or the audit log', async () => {
      const victim = await signedInUser(t.app, { email: address('alice'), fullName: 'Alice Example' });
      const attacker = await registerAndLogin(address('operator'), 'operator-pass-1');
      const own = await call(t, 'POST', 'accounts', attacker.headers, {
        slug: `own-${Date.now().toString(36)}-${n++}`,
        legalName: 'Own Ltd',
      });
      assert.equal(own.status, 201);
      const added = await call(t, 'POST', `accounts/${own.body.data.id}/members`, attacker.headers, {
        chainerId: victim.user.id,
        role: 'viewer',
      });
      assert.equal(added.status, 201);
      assert.equal(added.body.data.chainerId, victim.user.id);
      assert.equal(added.body.data.status, 'active');
      assert.equal(added.body.data.email, null);
      assert.equal(added.body.data.joinedAt, null);
      const list = await call(t, 'GET', `accounts/${own.body.data.id}/members`, attacker.headers);
      assert.equal(list.body.data.find((m: { chainerId: string }) => m.chainerId === victim.user.id).email, null);
      const logs = await call(t, 'GET', `accounts/${own.body.data.id}/logs`, attacker.headers);
      assert.equal(logs.status, 200);
      assert.ok(!JSON.stringify(logs.body).includes(victim.user.email), JSON.stringify(logs.body));
      const removed = await call(
        t,
        'DELETE',
        `accounts/${own.body.data.id}/members/${victim.user.id}`,
        attacker.headers,
      );
      assert.equal(removed.body.data.email, null);
      assert.ok(
        !JSON.stringify((await call(t, 'GET', `accounts/${own.body.data.id}/logs`, attacker.headers)).body).includes(
          victim.user.email,
        ),
      );
      // the user is told, and sees the account they were put in
      const notes = await call(t, 'GET', 'notifications', victim.headers);
      assert.match(notes.body.data[0].title, /You were added to Own Ltd/);
    });

    it('removal from one account leaves the user signed in everywhere else; their session and OAuth tokens are shut out of that account only', async () => {
      const paul = await signedInUser(t.app, { email: address('paul') });
      const home = await makeTeam(t.app);
      await call(t, 'POST', `accounts/${home.account.id}/members`, home.owner.headers, {
        chainerId: paul.user.id,
        role: 'member',
      });
      const carol = await makeTeam(t.app);
      const y = carol.account.id;
      assert.equal(
        (
          await call(t, 'POST', `accounts/${y}/members`, carol.owner.headers, {
            chainerId: paul.user.id,
            role: 'member',
          })
        ).status,
        201,
      );

      // Paul lets a third-party app run AI for him and read his wallet
      const client = await makeClient(t);
      const { verifier, challenge } = pkcePair();
      const { location } = await authorizeAndAllow(
        t,
        authorizeQuery(client.clientId, challenge, { scope: 'execution:run wallet:read' }),
        paul.user.email,
        TEST_PASSWORD,
      );
      const exchanged = await t.inject({
        method: 'POST',
        url: '/api/v1/oauth/token',
        headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
        payload: form({
          grant_type: 'authorization_code',
          code: location.searchParams.get('code')!,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        }),
      });
      assert.equal(exchanged.statusCode, 200, exchanged.payload);
      const { access_token: appToken, refresh_token: appRefresh } = JSON.parse(exchanged.payload) as {
        access_token: string;
        refresh_token: string;
      };
      const runIn = (accountId: string) =>
        t.inject({
          method: 'POST',
          url: '/api/v1/features/chat/runs',
          headers: { ...bearer(appToken), 'x-account-id': accountId },
          payload: { messages: [{ role: 'user', content: 'hi' }] },
        });
      // before: the app's token reaches account Y (it stops only at the AI entitlement)
      assert.equal(JSON.parse((await runIn(y)).payload).error.code, 'AI_NOT_ENTITLED');

      const removed = await call(t, 'DELETE', `accounts/${y}/members/${paul.user.id}`, carol.owner.headers);
      assert.equal(removed.status, 200);
      assert.equal(removed.body.data.revokedSessions, 0);

      // Y is closed to every token of Paul's
      const session = await call(t, 'GET', `accounts/${y}`, paul.headers);
      assert.equal(session.status, 403);
      assert.equal(session.body.error!.code, 'FORBIDDEN');
      const app = await runIn(y);
      assert.equal(app.statusCode, 403);
      assert.equal(JSON.parse(app.payload).error.code, 'FORBIDDEN');
      // everything that is not Y's keeps working: his sign-in, his other account, his grant
      assert.equal((await call(t, 'GET', 'auth/me', paul.headers)).status, 200);
      assert.equal((await call(t, 'GET', `accounts/${home.account.id}`, paul.headers)).status, 200);
      assert.equal(JSON.parse((await runIn(home.account.id)).payload).error.code, 'AI_NOT_ENTITLED');
      assert.equal((await t.inject({ url: '/api/v1/wallet/me', headers: bearer(appToken) })).statusCode, 200);
      const refreshed = await t.inject({
        method: 'POST',
        url: '/api/v1/oauth/token',
        headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
        payload: form({ grant_type: 'refresh_token', refresh_token: appRefresh }),
      });
      assert.equal(refreshed.statusCode, 200);
      const fresh = JSON.parse(refreshed.payload).access_token as string;
      const again = await t.inject({
        method: 'POST',
        url: '/api/v1/features/chat/runs',
        headers: { ...bearer(fresh), 'x-account-id': y },
        payload: { messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(JSON.parse(again.payload).error.code, 'FORBIDDEN');
      const sessions = await t.app.kernel.db
        .selectFrom('auth_sessions')
        .select('revoked_at')
        .where('user_id', '=', paul.user.id)
        .execute();
      assert.ok(sessions.length > 0 && sessions.every((r) => r.revoked_at === null));
    });
  });
});
