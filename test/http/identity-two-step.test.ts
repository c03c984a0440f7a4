import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, insertionOrder, storedText, type TestApp } from '../helpers/app.js';
import { bearer, makeUser, signedInUser } from '../helpers/factories.js';
import { totpAt } from '../helpers/second-factors.js';
import { ManualClock } from '../../src/lib/clock.js';

/**
 * Two-step sign-in over the API (docs/identity.md): TOTP set-up, MFA_REQUIRED at every way in,
 * POST /auth/login/mfa, recovery codes, and each refusal: wrong, replayed and used codes,
 * expired and foreign tokens, the attempt limits, turning it off without a code.
 */
let t: TestApp;
const clock = new ManualClock('2026-03-01T10:00:00Z');
before(async () => {
  t = await createTestApp({ clock });
});
after(async () => t.close());

let ip = 0;
/** Each call from its own address: the per-caller route limits stay out of the way unless a test wants them. */
const call = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}, from?: string) =>
  t.inject({
    method,
    url: `/api/v1${url}`,
    payload: payload as object,
    headers: { 'user-agent': 'TestAgent/1.0', ...headers },
    remoteAddress: from ?? `10.9.${(ip >> 8) & 255}.${ip++ & 255}`,
  });
const body = <T = Record<string, unknown>>(res: { payload: string }) =>
  JSON.parse(res.payload) as { data: T; error: { code: string; message: string; details?: any } | null };
const step = () => clock.advance(30_000);

/** A signed-in user with two-step sign-in on: the secret, recovery codes and bearer headers. */
async function withTwoStep() {
  const me = await signedInUser(t.app);
  const setup = body<{ secret: string; otpauthUrl: string }>(await call('POST', '/auth/totp/setup', {}, me.headers));
  const enabled = await call('POST', '/auth/totp/enable', { code: totpAt(setup.data.secret, clock.now()) }, me.headers);
  assert.equal(enabled.statusCode, 200, enabled.payload);
  step(); // the enabling code's time step is spent
  return {
    ...me,
    secret: setup.data.secret,
    recoveryCodes: body<{ recoveryCodes: string[] }>(enabled).data.recoveryCodes,
  };
}

async function mfaToken(email: string, password: string) {
  const res = await call('POST', '/auth/login', { email, password });
  assert.equal(res.statusCode, 401, res.payload);
  const { error } = body(res);
  assert.equal(error?.code, 'MFA_REQUIRED');
  return error!.details as { mfaToken: string; methods: string[]; expiresIn: number };
}

describe('turning two-step sign-in on and off', () => {
  test('setup gives a base32 secret and its otpauth URL; a code from it turns it on with ten recovery codes', async () => {
    const me = await signedInUser(t.app);
    const setup = await call('POST', '/auth/totp/setup', {}, me.headers);
    assert.equal(setup.statusCode, 200, setup.payload);
    const { secret, otpauthUrl } = body<{ secret: string; otpauthUrl: string }>(setup).data;
    assert.match(secret, /^[A-Z2-7]{32}$/);
    const url = new URL(otpauthUrl);
    assert.equal(url.protocol, 'otpauth:');
    assert.equal(url.searchParams.get('secret'), secret);
    assert.equal(url.searchParams.get('algorithm'), 'SHA1');
    assert.equal(url.searchParams.get('digits'), '6');
    assert.equal(url.searchParams.get('period'), '30');
    assert.equal(url.searchParams.get('issuer'), 'Gantry');
    // Not on until a code proves the app has it.
    assert.equal(
      body<{ enabled: boolean }>(await call('GET', '/auth/totp', undefined, me.headers)).data.enabled,
      false,
    );

    const wrong = await call('POST', '/auth/totp/enable', { code: '000000' }, me.headers);
    assert.equal(wrong.statusCode, 403);
    assert.equal(body(wrong).error?.code, 'FORBIDDEN');
    assert.equal(body(wrong).error?.details[0].field, 'code');

    const on = await call('POST', '/auth/totp/enable', { code: totpAt(secret, clock.now()) }, me.headers);
    assert.equal(on.statusCode, 200, on.payload);
    const codes = body<{ recoveryCodes: string[] }>(on).data.recoveryCodes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const c of codes) assert.match(c, /^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    const state = body<{ enabled: boolean; recoveryCodesLeft: number }>(
      await call('GET', '/auth/totp', undefined, me.headers),
    );
    assert.deepEqual({ enabled: state.data.enabled, left: state.data.recoveryCodesLeft }, { enabled: true, left: 10 });
    // The session that turned it on has proved the factor (the step-up rule reads it).
    const row = await t.app.kernel.db
      .selectFrom('auth_sessions')
      .selectAll()
      .where('id', '=', me.sessionId)
      .executeTakeFirstOrThrow();
    assert.equal(row.factor_verified_at, clock.now().toISOString());
    // Neither the secret nor a recovery code is stored in clear.
    const stored = await storedText(t.app);
    assert.ok(!stored.includes(secret));
    for (const c of codes) assert.ok(!stored.includes(c) && !stored.includes(c.replaceAll('-', '')));
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', me.user.email)
      .where('kind', '=', 'two_step_on')
      .executeTakeFirst();
    assert.ok(mail, 'a notice mail is queued');
    // A second setup while on is refused: it would replace the app silently.
    assert.equal((await call('POST', '/auth/totp/setup', {}, me.headers)).statusCode, 409);
  });

  test('turning it off needs a current code: none is 400, a wrong one 403, a right one turns it off', async () => {
    const me = await withTwoStep();
    const none = await call('DELETE', '/auth/totp', {}, me.headers);
    assert.equal(none.statusCode, 400);
    assert.equal(body(none).error?.code, 'VALIDATION_FAILED');
    const wrong = await call('DELETE', '/auth/totp', { code: '123456' }, me.headers);
    assert.equal(wrong.statusCode, 403);
    assert.equal(body(await call('GET', '/auth/totp', undefined, me.headers)).data.enabled, true);

    const off = await call('DELETE', '/auth/totp', { code: totpAt(me.secret, clock.now()) }, me.headers);
    assert.equal(off.statusCode, 200, off.payload);
    assert.equal(body(await call('GET', '/auth/totp', undefined, me.headers)).data.enabled, false);
    const left = await t.app.kernel.db
      .selectFrom('user_recovery_codes')
      .select('id')
      .where('user_id', '=', me.user.id)
      .execute();
    assert.equal(left.length, 0);
    // Signing in asks for nothing more.
    assert.equal(
      (await call('POST', '/auth/login', { email: me.user.email, password: me.user.password })).statusCode,
      200,
    );
  });

  test('new recovery codes need a code, and the old ones stop working', async () => {
    const me = await withTwoStep();
    assert.equal((await call('POST', '/auth/totp/recovery-codes', { code: '111111' }, me.headers)).statusCode, 403);
    const fresh = await call('POST', '/auth/totp/recovery-codes', { code: totpAt(me.secret, clock.now()) }, me.headers);
    assert.equal(fresh.statusCode, 200, fresh.payload);
    const next = body<{ recoveryCodes: string[] }>(fresh).data.recoveryCodes;
    const { mfaToken: first } = await mfaToken(me.user.email, me.user.password);
    const old = await call('POST', '/auth/login/mfa', { mfaToken: first, code: me.recoveryCodes[0] });
    assert.equal(old.statusCode, 401);
    assert.equal(body(old).error?.code, 'INVALID_CREDENTIALS');
    assert.equal((await call('POST', '/auth/login/mfa', { mfaToken: first, code: next[0] })).statusCode, 200);
  });
});

describe('signing in with two-step sign-in on', () => {
  test('login answers 401 MFA_REQUIRED with an mfaToken and the methods, and opens no session', async () => {
    const me = await withTwoStep();
    const before = await t.app.kernel.db
      .selectFrom('auth_sessions')
      .select('id')
      .where('user_id', '=', me.user.id)
      .execute();
    const details = await mfaToken(me.user.email, me.user.password);
    assert.deepEqual(details.methods, ['totp', 'recovery_code']);
    assert.equal(details.expiresIn, 300);
    assert.ok(details.mfaToken.length >= 32);
    const afterRows = await t.app.kernel.db
      .selectFrom('auth_sessions')
      .select('id')
      .where('user_id', '=', me.user.id)
      .execute();
    assert.equal(afterRows.length, before.length);
    // A wrong password is still the plain 401, telling nothing about the second step.
    const wrong = await call('POST', '/auth/login', { email: me.user.email, password: 'not the password' });
    assert.equal(body(wrong).error?.code, 'INVALID_CREDENTIALS');
  });

  test('the right code signs in (a session that proved the factor); a wrong one is 401; a replay of the same step is refused', async () => {
    const me = await withTwoStep();
    const { mfaToken: token } = await mfaToken(me.user.email, me.user.password);
    const wrong = await call('POST', '/auth/login/mfa', { mfaToken: token, code: '000000' });
    assert.equal(wrong.statusCode, 401);
    assert.equal(body(wrong).error?.code, 'INVALID_CREDENTIALS');

    const code = totpAt(me.secret, clock.now());
    const ok = await call('POST', '/auth/login/mfa', { mfaToken: token, code });
    assert.equal(ok.statusCode, 200, ok.payload);
    const session = body<{ accessToken: string; user: { id: string } }>(ok).data;
    assert.equal(session.user.id, me.user.id);
    assert.equal((await call('GET', '/auth/me', undefined, bearer(session.accessToken))).statusCode, 200);
    const newest = await t.app.kernel.db
      .selectFrom('auth_sessions')
      .selectAll()
      .where('user_id', '=', me.user.id)
      .orderBy(insertionOrder(), 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(newest.factor_verified_at, clock.now().toISOString());
    assert.equal(newest.user_agent, 'TestAgent/1.0');
    // The mfaToken is spent.
    assert.equal(body(await call('POST', '/auth/login/mfa', { mfaToken: token, code })).error?.code, 'UNAUTHORIZED');

    // The same code again, through a new sign-in in the same 30 s: a replay, refused.
    const again = await mfaToken(me.user.email, me.user.password);
    const replay = await call('POST', '/auth/login/mfa', { mfaToken: again.mfaToken, code });
    assert.equal(replay.statusCode, 401);
    assert.equal(body(replay).error?.code, 'INVALID_CREDENTIALS');
    // The previous step's code is older than the one used: refused too. The next step's works.
    assert.equal(
      (await call('POST', '/auth/login/mfa', { mfaToken: again.mfaToken, code: totpAt(me.secret, clock.now(), -1) }))
        .statusCode,
      401,
    );
    step();
    assert.equal(
      (await call('POST', '/auth/login/mfa', { mfaToken: again.mfaToken, code: totpAt(me.secret, clock.now()) }))
        .statusCode,
      200,
    );
  });

  test('a recovery code signs in once; used again it is refused', async () => {
    const me = await withTwoStep();
    const first = await mfaToken(me.user.email, me.user.password);
    // Typed in capitals and without dashes: the same code.
    const typed = me.recoveryCodes[3].replaceAll('-', '').toUpperCase();
    assert.equal((await call('POST', '/auth/login/mfa', { mfaToken: first.mfaToken, code: typed })).statusCode, 200);
    const used = await t.app.kernel.db
      .selectFrom('user_recovery_codes')
      .select('used_at')
      .where('user_id', '=', me.user.id)
      .where('used_at', 'is not', null)
      .execute();
    assert.equal(used.length, 1);
    const second = await mfaToken(me.user.email, me.user.password);
    const again = await call('POST', '/auth/login/mfa', { mfaToken: second.mfaToken, code: me.recoveryCodes[3] });
    assert.equal(again.statusCode, 401);
    assert.equal(body(again).error?.code, 'INVALID_CREDENTIALS');
    assert.equal(body(await call('GET', '/auth/totp', undefined, me.headers)).data.recoveryCodesLeft, 9);
  });

  test('an expired mfaToken is refused, so is a foreign one (another secret, another user)', async () => {
    const me = await withTwoStep();
    const other = await withTwoStep();
    const { mfaToken: token } = await mfaToken(me.user.email, me.user.password);
    clock.advance(5 * 60_000 + 1_000);
    const expired = await call('POST', '/auth/login/mfa', { mfaToken: token, code: totpAt(me.secret, clock.now()) });
    assert.equal(expired.statusCode, 401);
    assert.equal(body(expired).error?.code, 'UNAUTHORIZED');

    // A refresh token, or any other secret, is no mfaToken.
    const foreign = await call('POST', '/auth/login/mfa', {
      mfaToken: me.refreshToken,
      code: totpAt(me.secret, clock.now()),
    });
    assert.equal(body(foreign).error?.code, 'UNAUTHORIZED');
    // A page's second step is bound to its browser: the API cannot complete it.
    const page = await t.app.services.identity.pageSecondStep(me.user.id, '/account', 'a'.repeat(64));
    const bound = await call('POST', '/auth/login/mfa', {
      mfaToken: page!.mfaToken,
      code: totpAt(me.secret, clock.now()),
    });
    assert.equal(body(bound).error?.code, 'UNAUTHORIZED');
    // Another user's code does not answer this user's sign-in.
    const mine = await mfaToken(me.user.email, me.user.password);
    const theirs = await call('POST', '/auth/login/mfa', {
      mfaToken: mine.mfaToken,
      code: totpAt(other.secret, clock.now()),
    });
    assert.equal(body(theirs).error?.code, 'INVALID_CREDENTIALS');
  });

  test('a sign-in link asks for the second factor too', async () => {
    const me = await withTwoStep();
    await call('POST', '/auth/magic-link', { email: me.user.email });
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', me.user.email)
      .where('kind', '=', 'magic_link')
      .orderBy(insertionOrder(), 'desc')
      .executeTakeFirstOrThrow();
    const token = decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(mail.body_text)![1]);
    const res = await call('POST', '/auth/magic-link/verify', { token });
    assert.equal(res.statusCode, 401);
    const { error } = body(res);
    assert.equal(error?.code, 'MFA_REQUIRED');
    const done = await call('POST', '/auth/login/mfa', {
      mfaToken: error!.details.mfaToken,
      code: totpAt(me.secret, clock.now()),
    });
    assert.equal(done.statusCode, 200, done.payload);
  });
});

describe('attempts are limited', () => {
  test('the fifth wrong code burns the mfaToken: the right code after it is refused', async () => {
    const me = await withTwoStep();
    const { mfaToken: token } = await mfaToken(me.user.email, me.user.password);
    for (let i = 0; i < 5; i++)
      assert.equal(
        body(await call('POST', '/auth/login/mfa', { mfaToken: token, code: `00000${i}` })).error?.code,
        'INVALID_CREDENTIALS',
      );
    const late = await call('POST', '/auth/login/mfa', { mfaToken: token, code: totpAt(me.secret, clock.now()) });
    assert.equal(late.statusCode, 401);
    assert.equal(body(late).error?.code, 'UNAUTHORIZED');
  });

  test('one budget per user across sign-ins and addresses: past 10 codes in 5 minutes, 429 with Retry-After', async () => {
    const me = await withTwoStep();
    // The code that turned it on was the first of the 10.
    let tried = 1;
    while (tried < 10) {
      const { mfaToken: token } = await mfaToken(me.user.email, me.user.password);
      for (let i = 0; i < 4 && tried < 10; i++, tried++)
        assert.equal((await call('POST', '/auth/login/mfa', { mfaToken: token, code: '999999' })).statusCode, 401);
    }
    const { mfaToken: token } = await mfaToken(me.user.email, me.user.password);
    const limited = await call('POST', '/auth/login/mfa', { mfaToken: token, code: totpAt(me.secret, clock.now()) });
    assert.equal(limited.statusCode, 429);
    assert.equal(body(limited).error?.code, 'RATE_LIMIT_EXCEEDED');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    // Step-up and turning it off draw on the same budget.
    assert.equal(
      (await call('DELETE', '/auth/totp', { code: totpAt(me.secret, clock.now()) }, me.headers)).statusCode,
      429,
    );
    clock.advance(5 * 60_000);
    assert.equal(
      (
        await call('POST', '/auth/login/mfa', {
          mfaToken: (await mfaToken(me.user.email, me.user.password)).mfaToken,
          code: totpAt(me.secret, clock.now()),
        })
      ).statusCode,
      200,
    );
  });

  test('the route itself allows 8 second steps a minute per address', async () => {
    const me = await withTwoStep();
    const { mfaToken: token } = await mfaToken(me.user.email, me.user.password);
    const from = '10.99.0.1';
    for (let i = 0; i < 8; i++)
      await call('POST', '/auth/login/mfa', { mfaToken: token, code: 'abcd-efgh-jkmn' }, {}, from);
    const res = await call('POST', '/auth/login/mfa', { mfaToken: token, code: 'abcd-efgh-jkmn' }, {}, from);
    assert.equal(res.statusCode, 429);
  });
});

describe('sessions (GET/DELETE /auth/sessions)', () => {
  test("lists the live sessions with this one marked; ending another signs it out at once; a stranger's is 404", async () => {
    const user = await makeUser(t.app);
    const login = async (agent: string) =>
      body<{ accessToken: string }>(
        await call(
          'POST',
          '/auth/login',
          { email: user.email, password: user.password },
          { 'user-agent': agent },
          '10.50.0.7',
        ),
      ).data.accessToken;
    const mine = await login('Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0');
    const other = await login('curl/8.0');
    const list = await call('GET', '/auth/sessions', undefined, bearer(mine));
    assert.equal(list.statusCode, 200, list.payload);
    const sessions =
      body<
        Array<{ id: string; current: boolean; userAgent: string; ip: string; createdAt: string; lastUsedAt: string }>
      >(list).data;
    assert.equal(sessions.length, 2);
    const current = sessions.find((s) => s.current)!;
    assert.equal(current.userAgent, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0');
    assert.equal(current.ip, '10.50.0.7');
    assert.deepEqual(Object.keys(current).sort(), ['createdAt', 'current', 'id', 'ip', 'lastUsedAt', 'userAgent']);
    const otherId = sessions.find((s) => !s.current)!.id;

    assert.equal((await call('GET', '/auth/me', undefined, bearer(other))).statusCode, 200);
    const ended = await call('DELETE', `/auth/sessions/${otherId}`, undefined, bearer(mine));
    assert.equal(ended.statusCode, 200, ended.payload);
    assert.deepEqual(body(ended).data, { id: otherId, revoked: true });
    assert.equal((await call('GET', '/auth/me', undefined, bearer(other))).statusCode, 401);
    assert.equal(body<unknown[]>(await call('GET', '/auth/sessions', undefined, bearer(mine))).data.length, 1);
    assert.equal((await call('DELETE', `/auth/sessions/${otherId}`, undefined, bearer(mine))).statusCode, 404);

    const stranger = await signedInUser(t.app);
    const theirs = await call('DELETE', `/auth/sessions/${current.id}`, undefined, stranger.headers);
    assert.equal(theirs.statusCode, 404);
    assert.equal((await call('GET', '/auth/me', undefined, bearer(mine))).statusCode, 200);
  });
});

describe('secrets stay out of the logs', () => {
  test('neither the TOTP secret, a code, a recovery code nor an mfaToken is ever logged', async () => {
    const from = t.logs.length;
    const me = await withTwoStep();
    const first = await mfaToken(me.user.email, me.user.password);
    assert.equal((await call('POST', '/auth/login/mfa', { mfaToken: first.mfaToken, code: '000000' })).statusCode, 401);
    const code = totpAt(me.secret, clock.now());
    assert.equal((await call('POST', '/auth/login/mfa', { mfaToken: first.mfaToken, code })).statusCode, 200);
    const second = await mfaToken(me.user.email, me.user.password);
    const recovery = me.recoveryCodes[0];
    assert.equal(
      (await call('POST', '/auth/login/mfa', { mfaToken: second.mfaToken, code: recovery })).statusCode,
      200,
    );
    const logged = t.logs.slice(from).join('\n');
    assert.match(logged, /auth\.login\.mfa/, 'the requests themselves are logged');
    const secrets = [me.secret, code, first.mfaToken, second.mfaToken];
    for (const c of me.recoveryCodes) secrets.push(c, c.replaceAll('-', ''));
    for (const secret of secrets) assert.ok(!logged.includes(secret), `${secret} is in the logs`);
  });
});
