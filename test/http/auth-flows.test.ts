import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, insertionOrder, type TestApp } from '../helpers/app.js';
import { bearer, makeUser, signedInUser, TEST_PASSWORD } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';

interface Body<T = Record<string, unknown>> {
  data: T;
  error: { code: string; message: string; details?: Array<{ field: string }> } | null;
  meta: { requestId: string };
}

let seq = 0;
const email = (tag: string) => `${tag}-${Date.now().toString(36)}-${seq++}@example.test`;

describe('sign-in API flows', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  // Every anonymous call comes from its own address so the per-IP limits of one test do not
  // spill into another; the rate-limit tests below use a fixed address on purpose.
  let ip = 0;
  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      payload: payload as object,
      headers,
      remoteAddress: `10.1.${(ip >> 8) & 255}.${ip++ & 255}`,
    });
  const body = <T = Record<string, unknown>>(res: { result: unknown; payload: string }) =>
    JSON.parse(res.payload) as Body<T>;

  async function lastMail(to: string, kind?: string) {
    const rows = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', to)
      .$if(kind !== undefined, (q) => q.where('kind', '=', kind!))
      // Insertion order (rowid): the manual clock gives many mails the same created_at.
      .orderBy(insertionOrder(), 'desc')
      .execute();
    return rows[0];
  }
  const tokenIn = (text: string) => /token=([A-Za-z0-9_%-]+)/.exec(text)![1];
  const codeIn = (text: string) => /code is (\d{6})/.exec(text)![1];

  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  describe('register and confirm', () => {
    it('creates the user (201, data.user), unconfirmed, and mails a confirmation link to the Gantry page', async () => {
      const address = email('reg');
      const res = await post('/auth/register', {
        email: address.toUpperCase(),
        password: 'a good password',
        fullName: 'Reg Ister',
        username: 'Reg.User1',
      });
      assert.equal(res.statusCode, 201);
      const { data } = body<{ user: Record<string, unknown> }>(res);
      assert.equal(data.user.email, address);
      assert.equal(data.user.username, 'reg.user1');
      assert.equal(data.user.emailVerified, false);
      assert.equal('password_hash' in data.user || 'passwordHash' in data.user, false);
      const mail = await lastMail(address, 'email_confirmation');
      assert.match(mail.body_text, /http:\/\/127\.0\.0\.1:8080\/auth\/confirm-email\?token=/);
      // Login works before confirmation (docs/interface.md, Sign-in API).
      const login = await post('/auth/login', { email: address, password: 'a good password' });
      assert.equal(login.statusCode, 200);
    });

    it('refuses a taken email (409) and answers joi failures per field', async () => {
      const user = await makeUser(t.app);
      const taken = await post('/auth/register', { email: user.email, password: 'another password' });
      assert.equal(taken.statusCode, 409);
      assert.equal(body(taken).error!.code, 'CONFLICT');
      const reservedEmail = email('reserved');
      const reserved = await post('/auth/register', {
        email: reservedEmail,
        password: 'another password',
        username: 'admin',
      });
      assert.equal(reserved.statusCode, 409);
      assert.equal(await t.app.services.identity.findUserByEmail(reservedEmail), undefined);
      const bad = await post('/auth/register', { email: 'not-an-email', password: 'short' });
      assert.equal(bad.statusCode, 400);
      const fields = body(bad)
        .error!.details!.map((d) => d.field)
        .sort();
      assert.deepEqual(fields, ['email', 'password']);
    });

    it('confirms once with the link token; a replay is 410 GONE; the stored secret is a hash', async () => {
      const address = email('confirm');
      await post('/auth/register', { email: address, password: 'a good password' });
      const token = decodeURIComponent(tokenIn((await lastMail(address, 'email_confirmation')).body_text));
      const stored = await t.app.kernel.db
        .selectFrom('one_time_tokens')
        .select('token_hash')
        .where('purpose', '=', 'email_confirmation')
        .execute();
      assert.ok(stored.every((r) => !r.token_hash.includes(token)));
      const ok = await post('/auth/confirm-email', { token });
      assert.equal(ok.statusCode, 200);
      assert.equal(body<{ user: { emailVerified: boolean } }>(ok).data.user.emailVerified, true);
      const replay = await post('/auth/confirm-email', { token });
      assert.equal(replay.statusCode, 410);
      assert.equal(body(replay).error!.code, 'GONE');
    });

    it('refuses an expired confirmation token', async () => {
      const address = email('expired');
      await post('/auth/register', { email: address, password: 'a good password' });
      const token = decodeURIComponent(tokenIn((await lastMail(address, 'email_confirmation')).body_text));
      clock.advance(24 * 3600 * 1000 + 1000);
      const res = await post('/auth/confirm-email', { token });
      assert.equal(res.statusCode, 410);
      const user = await t.app.services.identity.findUserByEmail(address);
      assert.equal(user!.email_verified_at, null);
    });

    it('resend-confirmation answers 202 for known, unknown and confirmed emails alike, and supersedes the old link', async () => {
      const address = email('resend');
      await post('/auth/register', { email: address, password: 'a good password' });
      const first = decodeURIComponent(tokenIn((await lastMail(address, 'email_confirmation')).body_text));
      const known = await post('/auth/resend-confirmation', { email: address });
      const unknown = await post('/auth/resend-confirmation', { email: email('nobody') });
      const confirmed = await post('/auth/resend-confirmation', {
        email: (await makeUser(t.app, { verified: true })).email,
      });
      for (const res of [known, unknown, confirmed]) assert.equal(res.statusCode, 202);
      assert.deepEqual(body(known).data, body(unknown).data);
      const second = decodeURIComponent(tokenIn((await lastMail(address, 'email_confirmation')).body_text));
      assert.notEqual(first, second);
      assert.equal((await post('/auth/confirm-email', { token: first })).statusCode, 410);
      assert.equal((await post('/auth/confirm-email', { token: second })).statusCode, 200);
    });
  });

  describe('password recovery', () => {
    it('forgot-password: 202 for unknown and known emails, same body; the mail carries a 6-digit code and the reset page link', async () => {
      const user = await makeUser(t.app);
      const known = await post('/auth/forgot-password', { email: user.email });
      const unknown = await post('/auth/forgot-password', { email: email('ghost') });
      assert.equal(known.statusCode, 202);
      assert.equal(unknown.statusCode, 202);
      assert.deepEqual(body(known).data, body(unknown).data);
      const mail = await lastMail(user.email, 'password_recovery');
      assert.match(mail.body_text, /code is \d{6}/);
      assert.match(mail.body_text, /http:\/\/127\.0\.0\.1:8080\/auth\/reset-password\?email=/);
    });

    it('code -> reset token -> new password; every session ends; code and token are single-use', async () => {
      const { user, headers, refreshToken } = await signedInUser(t.app);
      const other = await signedInUser(t.app, {});
      await post('/auth/forgot-password', { email: user.email });
      const code = codeIn((await lastMail(user.email, 'password_recovery')).body_text);
      const exchanged = await post('/auth/exchange-recovery-code', { email: user.email, code });
      assert.equal(exchanged.statusCode, 200);
      const { resetToken } = body<{ resetToken: string }>(exchanged).data;
      assert.ok(resetToken.length >= 32);
      assert.equal((await post('/auth/exchange-recovery-code', { email: user.email, code })).statusCode, 410);

      const reset = await post('/auth/reset-password', { resetToken, password: 'brand new password' });
      assert.equal(reset.statusCode, 200);
      assert.equal(
        (await post('/auth/reset-password', { resetToken, password: 'another new password' })).statusCode,
        410,
      );

      // Sessions of this user are gone at once: access token and refresh token.
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers })).statusCode, 401);
      assert.equal((await post('/auth/refresh', { refreshToken })).statusCode, 401);
      // Another user's session is untouched.
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: other.headers })).statusCode, 200);
      assert.equal((await post('/auth/login', { email: user.email, password: TEST_PASSWORD })).statusCode, 401);
      assert.equal((await post('/auth/login', { email: user.email, password: 'brand new password' })).statusCode, 200);
    });

    it('wrong codes burn the code after 5 attempts, so the right one no longer works', async () => {
      const user = await makeUser(t.app);
      await post('/auth/forgot-password', { email: user.email });
      const code = codeIn((await lastMail(user.email, 'password_recovery')).body_text);
      const wrong = code === '000000' ? '111111' : '000000';
      for (let i = 0; i < 5; i++) {
        const res = await post('/auth/exchange-recovery-code', { email: user.email, code: wrong });
        assert.equal(res.statusCode, 410);
      }
      assert.equal((await post('/auth/exchange-recovery-code', { email: user.email, code })).statusCode, 410);
    });

    it('an unknown email and a wrong code get the same answer; a malformed code is 400', async () => {
      const user = await makeUser(t.app);
      await post('/auth/forgot-password', { email: user.email });
      const a = await post('/auth/exchange-recovery-code', { email: email('ghost'), code: '123456' });
      const b = await post('/auth/exchange-recovery-code', {
        email: user.email,
        code: '999999' === codeIn((await lastMail(user.email, 'password_recovery')).body_text) ? '999998' : '999999',
      });
      assert.equal(a.statusCode, b.statusCode);
      assert.equal(body(a).error!.message, body(b).error!.message);
      const malformed = await post('/auth/exchange-recovery-code', { email: user.email, code: '12ab' });
      assert.equal(malformed.statusCode, 400);
      assert.equal(body(malformed).error!.details![0].field, 'code');
    });

    it('an expired code and an expired reset token are refused', async () => {
      const user = await makeUser(t.app);
      await post('/auth/forgot-password', { email: user.email });
      const code = codeIn((await lastMail(user.email, 'password_recovery')).body_text);
      clock.advance(15 * 60 * 1000 + 1);
      assert.equal((await post('/auth/exchange-recovery-code', { email: user.email, code })).statusCode, 410);

      await post('/auth/forgot-password', { email: user.email });
      const fresh = codeIn((await lastMail(user.email, 'password_recovery')).body_text);
      const { resetToken } = body<{ resetToken: string }>(
        await post('/auth/exchange-recovery-code', { email: user.email, code: fresh }),
      ).data;
      clock.advance(15 * 60 * 1000 + 1);
      assert.equal((await post('/auth/reset-password', { resetToken, password: 'too late password' })).statusCode, 410);
    });

    it('a new code supersedes the previous one', async () => {
      const user = await makeUser(t.app);
      await post('/auth/forgot-password', { email: user.email });
      const first = codeIn((await lastMail(user.email, 'password_recovery')).body_text);
      clock.advance(1000);
      await post('/auth/forgot-password', { email: user.email });
      const second = codeIn((await lastMail(user.email, 'password_recovery')).body_text);
      if (first !== second)
        assert.equal((await post('/auth/exchange-recovery-code', { email: user.email, code: first })).statusCode, 410);
      assert.equal((await post('/auth/exchange-recovery-code', { email: user.email, code: second })).statusCode, 200);
    });
  });

  describe('signed-in changes', () => {
    it('change-password checks the current password, keeps this session and ends the others', async () => {
      const me = await signedInUser(t.app);
      const second = await t.app.services.identity.sessions.start(me.user.id);
      const wrong = await post(
        '/auth/change-password',
        { currentPassword: 'not my password', newPassword: 'new password 1' },
        me.headers,
      );
      assert.equal(wrong.statusCode, 403);
      assert.equal(body(wrong).error!.details![0].field, 'currentPassword');
      const ok = await post(
        '/auth/change-password',
        { currentPassword: TEST_PASSWORD, newPassword: 'new password 1' },
        me.headers,
      );
      assert.equal(ok.statusCode, 200);
      assert.equal(body<{ endedSessions: number }>(ok).data.endedSessions, 1);
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: me.headers })).statusCode, 200);
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(second.accessToken) })).statusCode, 401);
      assert.equal((await post('/auth/login', { email: me.user.email, password: 'new password 1' })).statusCode, 200);
      assert.ok(await lastMail(me.user.email, 'password_changed'));
    });

    it('change-email mails the new address; the email changes only on confirmation, once', async () => {
      const me = await signedInUser(t.app);
      const newEmail = email('moved');
      const wrong = await post('/auth/change-email', { newEmail, password: 'wrong password' }, me.headers);
      assert.equal(wrong.statusCode, 403);
      const res = await post('/auth/change-email', { newEmail, password: TEST_PASSWORD }, me.headers);
      assert.equal(res.statusCode, 202);
      assert.equal(
        (await t.inject({ url: '/api/v1/auth/me', headers: me.headers })).result!.constructor === Object,
        true,
      );
      let current = body<{ email: string }>(await t.inject({ url: '/api/v1/auth/me', headers: me.headers })).data;
      assert.equal(current.email, me.user.email);
      assert.ok(await lastMail(me.user.email, 'email_change_notice'));
      const token = decodeURIComponent(tokenIn((await lastMail(newEmail, 'email_change')).body_text));
      const confirmed = await post('/auth/confirm-email', { token });
      assert.equal(confirmed.statusCode, 200);
      current = body<{ email: string }>(await t.inject({ url: '/api/v1/auth/me', headers: me.headers })).data;
      assert.equal(current.email, newEmail);
      assert.equal((await post('/auth/confirm-email', { token })).statusCode, 410);
      assert.equal((await post('/auth/login', { email: newEmail, password: TEST_PASSWORD })).statusCode, 200);
    });

    it('change-email to a taken address is 409', async () => {
      const me = await signedInUser(t.app);
      const other = await makeUser(t.app);
      const res = await post('/auth/change-email', { newEmail: other.email, password: TEST_PASSWORD }, me.headers);
      assert.equal(res.statusCode, 409);
    });

    it('check-username and claim-username', async () => {
      const me = await signedInUser(t.app);
      const name = `name_${seq++}_${Date.now().toString(36)}`;
      const free = await t.inject({ url: `/api/v1/auth/check-username?username=${name}`, remoteAddress: '10.9.0.1' });
      assert.equal(free.statusCode, 200);
      assert.deepEqual(body(free).data, { username: name, available: true });
      const reserved = await t.inject({ url: '/api/v1/auth/check-username?username=admin', remoteAddress: '10.9.0.1' });
      assert.equal(body<{ available: boolean }>(reserved).data.available, false);
      const bad = await t.inject({ url: '/api/v1/auth/check-username?username=a', remoteAddress: '10.9.0.1' });
      assert.equal(bad.statusCode, 400);

      const claimed = await post('/auth/claim-username', { username: name.toUpperCase() }, me.headers);
      assert.equal(claimed.statusCode, 200);
      assert.equal(body<{ user: { username: string } }>(claimed).data.user.username, name);
      assert.equal(
        body<{ available: boolean }>(
          await t.inject({ url: `/api/v1/auth/check-username?username=${name}`, remoteAddress: '10.9.0.1' }),
        ).data.available,
        false,
      );
      // Available to its own holder.
      assert.equal(
        body<{ available: boolean }>(
          await t.inject({ url: `/api/v1/auth/check-username?username=${name}`, headers: me.headers }),
        ).data.available,
        true,
      );
      const rival = await signedInUser(t.app);
      const taken = await post('/auth/claim-username', { username: name }, rival.headers);
      assert.equal(taken.statusCode, 409);
      assert.equal((await post('/auth/claim-username', { username: name })).statusCode, 401);
    });
  });

  describe('sessions', () => {
    it('refresh rotates; reusing a consumed refresh token revokes the family, its access token included, at once', async () => {
      const user = await makeUser(t.app);
      const login = body<{ accessToken: string; refreshToken: string }>(
        await post('/auth/login', { email: user.email, password: TEST_PASSWORD }),
      ).data;
      const rotated = await post('/auth/refresh', { refreshToken: login.refreshToken });
      assert.equal(rotated.statusCode, 200);
      const next = body<{ accessToken: string; refreshToken: string; user: { id: string } }>(rotated).data;
      assert.notEqual(next.refreshToken, login.refreshToken);
      assert.equal(next.user.id, user.id);
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(next.accessToken) })).statusCode, 200);

      const reuse = await post('/auth/refresh', { refreshToken: login.refreshToken });
      assert.equal(reuse.statusCode, 401);
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(next.accessToken) })).statusCode, 401);
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(login.accessToken) })).statusCode, 401);
      assert.equal((await post('/auth/refresh', { refreshToken: next.refreshToken })).statusCode, 401);
      const session = await t.app.kernel.db
        .selectFrom('auth_sessions')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(session.revoke_reason, 'refresh_token_reuse');
    });

    it('logout ends that session only; wrong password and unknown email share one answer', async () => {
      const user = await makeUser(t.app);
      const a = body<{ accessToken: string; refreshToken: string }>(
        await post('/auth/login', { email: user.email, password: TEST_PASSWORD }),
      ).data;
      const b = body<{ accessToken: string; refreshToken: string }>(
        await post('/auth/login', { email: user.email, password: TEST_PASSWORD }),
      ).data;
      const out = await post('/auth/logout', { refreshToken: a.refreshToken }, bearer(a.accessToken));
      assert.equal(out.statusCode, 200);
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(a.accessToken) })).statusCode, 401);
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(b.accessToken) })).statusCode, 200);
      const wrong = await post('/auth/login', { email: user.email, password: 'not the password' });
      const unknown = await post('/auth/login', { email: email('nobody'), password: 'not the password' });
      assert.equal(wrong.statusCode, 401);
      assert.deepEqual(body(wrong).error, body(unknown).error);
      assert.equal(body(wrong).error!.code, 'INVALID_CREDENTIALS');
    });

    it('an expired access token is refused', async () => {
      const { headers } = await signedInUser(t.app);
      clock.advance(3600 * 1000 + 1000);
      assert.equal((await t.inject({ url: '/api/v1/auth/me', headers })).statusCode, 401);
    });

    it('magic link: single use, expires after 15 minutes', async () => {
      const user = await makeUser(t.app, { verified: false });
      assert.equal((await post('/auth/magic-link', { email: user.email })).statusCode, 202);
      assert.equal((await post('/auth/magic-link', { email: email('nobody') })).statusCode, 202);
      const token = decodeURIComponent(tokenIn((await lastMail(user.email, 'magic_link')).body_text));
      const ok = await post('/auth/magic-link/verify', { token });
      assert.equal(ok.statusCode, 200);
      assert.equal((await post('/auth/magic-link/verify', { token })).statusCode, 401);
      assert.notEqual((await t.app.services.identity.findUserById(user.id))!.email_verified_at, null);
      await post('/auth/magic-link', { email: user.email });
      const late = decodeURIComponent(tokenIn((await lastMail(user.email, 'magic_link')).body_text));
      clock.advance(15 * 60 * 1000 + 1);
      assert.equal((await post('/auth/magic-link/verify', { token: late })).statusCode, 401);
    });
  });

  describe('pages', () => {
    const pageHeaders = (res: { headers: Record<string, unknown> }) => {
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['content-type']), /text\/html/);
    };

    it('the confirm page shows a form on GET (nothing used) and confirms on POST', async () => {
      const address = email('page');
      await post('/auth/register', { email: address, password: 'a good password' });
      const token = decodeURIComponent(tokenIn((await lastMail(address, 'email_confirmation')).body_text));
      const shown = await t.inject(`/auth/confirm-email?token=${encodeURIComponent(token)}`);
      assert.equal(shown.statusCode, 200);
      pageHeaders(shown);
      assert.match(shown.payload, /<form method="post" action="\/auth\/confirm-email">/);
      assert.equal((await t.app.services.identity.findUserByEmail(address))!.email_verified_at, null);
      const done = await t.inject({
        method: 'POST',
        url: '/auth/confirm-email',
        payload: `token=${encodeURIComponent(token)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        remoteAddress: '10.2.0.1',
      });
      assert.equal(done.statusCode, 200);
      pageHeaders(done);
      assert.match(done.payload, /is confirmed/);
      const again = await t.inject({
        method: 'POST',
        url: '/auth/confirm-email',
        payload: `token=${encodeURIComponent(token)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        remoteAddress: '10.2.0.1',
      });
      assert.equal(again.statusCode, 410);
      assert.match(again.payload, /already used or expired/);
    });

    it('the reset page takes email, code and new password and escapes what it echoes', async () => {
      const user = await makeUser(t.app);
      const shown = await t.inject('/auth/reset-password?email=%3Cscript%3E&code=123456');
      pageHeaders(shown);
      assert.doesNotMatch(shown.payload, /<script>/);
      assert.match(shown.payload, /&lt;script&gt;/);
      await post('/auth/forgot-password', { email: user.email });
      const code = codeIn((await lastMail(user.email, 'password_recovery')).body_text);
      const form = new URLSearchParams({ email: user.email, code, password: 'page set password' }).toString();
      const done = await t.inject({
        method: 'POST',
        url: '/auth/reset-password',
        payload: form,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        remoteAddress: '10.2.0.2',
      });
      assert.equal(done.statusCode, 200);
      pageHeaders(done);
      assert.equal((await post('/auth/login', { email: user.email, password: 'page set password' })).statusCode, 200);
      const replay = await t.inject({
        method: 'POST',
        url: '/auth/reset-password',
        payload: form,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        remoteAddress: '10.2.0.2',
      });
      assert.equal(replay.statusCode, 410);
    });
  });

  it('logs never hold a password, token or code', async () => {
    const joined = t.logs.join('\n');
    assert.ok(t.logs.length > 20);
    assert.doesNotMatch(joined, /correct horse battery|a good password|brand new password|page set password/);
    const secrets = await t.app.kernel.db.selectFrom('mail_outbox').select('body_text').execute();
    for (const { body_text } of secrets) {
      const token = /token=([A-Za-z0-9_%-]+)/.exec(body_text)?.[1];
      const code = /code is (\d{6})/.exec(body_text)?.[1];
      if (token) assert.ok(!joined.includes(decodeURIComponent(token)));
      if (code) assert.ok(!joined.includes(`"${code}"`) && !joined.includes(`code=${code}`));
    }
    const refresh = await t.app.kernel.db.selectFrom('auth_refresh_tokens').select('token_hash').limit(1).execute();
    assert.equal(refresh.length, 1);
  });
});
