import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, insertionOrder, type TestApp } from '../helpers/app.js';
import { bearer, signedInUser } from '../helpers/factories.js';
import { SoftAuthenticator, totpAt } from '../helpers/second-factors.js';
import { ManualClock } from '../../src/lib/clock.js';

/**
 * Passkeys over the API (docs/identity.md, Passkeys), with a software authenticator so each check
 * of the server can be made to fail: the challenge (ours, unused, unexpired, for this user), the
 * origin and RP ID, user verification, the signature counter. The browser tests drive the same
 * endpoints through Chromium's virtual authenticator.
 */
const ORIGIN = 'http://localhost:8080';
let t: TestApp;
const clock = new ManualClock('2026-03-01T10:00:00Z');
before(async () => {
  t = await createTestApp({ clock, env: { GANTRY_PUBLIC_URL: ORIGIN } });
});
after(async () => t.close());

let ip = 0;
const call = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  t.inject({
    method,
    url: `/api/v1${url}`,
    payload: payload as object,
    headers,
    remoteAddress: `10.8.${(ip >> 8) & 255}.${ip++ & 255}`,
  });
const body = <T = any>(res: { payload: string }) =>
  JSON.parse(res.payload) as { data: T; error: { code: string; message: string; details?: any } | null };

/** A signed-in user with a registered passkey (the authenticator that holds it). */
async function withPasskey(name?: string) {
  const me = await signedInUser(t.app);
  const device = new SoftAuthenticator(ORIGIN, 'localhost');
  const options = body(await call('POST', '/auth/passkeys/registration/options', {}, me.headers)).data;
  const res = await call('POST', '/auth/passkeys', { credential: device.register(options), name }, me.headers);
  assert.equal(res.statusCode, 201, res.payload);
  return { ...me, device, passkey: body<{ id: string; name: string; createdAt: string }>(res).data };
}
const signInOptions = async (mfaToken?: string) =>
  body(await call('POST', '/auth/passkeys/authentication/options', mfaToken ? { mfaToken } : {})).data;
const verify = (credential: unknown, mfaToken?: string) =>
  call('POST', '/auth/passkeys/authentication/verify', { credential, ...(mfaToken && { mfaToken }) });

describe('registering passkeys', () => {
  test('options ask for a discoverable credential with user verification; the answer is kept and listed', async () => {
    const me = await signedInUser(t.app);
    const options = body(await call('POST', '/auth/passkeys/registration/options', {}, me.headers)).data;
    assert.equal(options.rp.id, 'localhost');
    assert.equal(options.rp.name, 'Gantry');
    assert.equal(options.user.name, me.user.email);
    assert.equal(Buffer.from(options.user.id, 'base64url').toString(), me.user.id);
    assert.equal(options.authenticatorSelection.residentKey, 'required');
    assert.equal(options.authenticatorSelection.userVerification, 'required');
    const device = new SoftAuthenticator(ORIGIN, 'localhost');
    const res = await call(
      'POST',
      '/auth/passkeys',
      { credential: device.register(options), name: 'Laptop' },
      me.headers,
    );
    assert.equal(res.statusCode, 201, res.payload);
    const created = body(res).data;
    assert.equal(created.name, 'Laptop');
    assert.equal(created.createdAt, clock.now().toISOString());
    assert.deepEqual(Object.keys(created).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'synced']);
    const list = body(await call('GET', '/auth/passkeys', undefined, me.headers)).data;
    assert.deepEqual(list, [created]);
    const row = await t.app.kernel.db
      .selectFrom('user_passkeys')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.credential_id, device.id);
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .select('kind')
      .where('to_address', '=', me.user.email)
      .where('kind', '=', 'passkey_added')
      .executeTakeFirst();
    assert.ok(mail);
    // Its next options exclude it, so the same device is not registered twice.
    const next = body(await call('POST', '/auth/passkeys/registration/options', {}, me.headers)).data;
    assert.deepEqual(
      next.excludeCredentials.map((c: { id: string }) => c.id),
      [device.id],
    );
  });

  test('refused: another origin, no user verification, a challenge used twice, one made for someone else, one never made', async () => {
    const me = await signedInUser(t.app);
    const other = await signedInUser(t.app);
    const options = async (who = me) =>
      body(await call('POST', '/auth/passkeys/registration/options', {}, who.headers)).data;
    const post = (credential: unknown) => call('POST', '/auth/passkeys', { credential }, me.headers);
    const refused = async (res: Awaited<ReturnType<typeof post>>, pattern: RegExp) => {
      assert.equal(res.statusCode, 400, res.payload);
      assert.equal(body(res).error?.code, 'VALIDATION_FAILED');
      assert.match(body(res).error!.message, pattern);
    };
    await refused(
      await post(new SoftAuthenticator('https://evil.example', 'localhost').register(await options())),
      /origin/i,
    );
    await refused(await post(new SoftAuthenticator(ORIGIN, 'evil.example').register(await options())), /RP ID/i);
    await refused(
      await post(new SoftAuthenticator(ORIGIN, 'localhost').register(await options(), { verified: false })),
      /verif/i,
    );
    const answer = new SoftAuthenticator(ORIGIN, 'localhost').register(await options());
    assert.equal((await post(answer)).statusCode, 201);
    await refused(await post(answer), /no registration you started/);
    await refused(
      await post(new SoftAuthenticator(ORIGIN, 'localhost').register(await options(other))),
      /no registration you started/,
    );
    const made = await options();
    await refused(
      await post(
        new SoftAuthenticator(ORIGIN, 'localhost').register({ ...made, challenge: 'bm90LW91ci1jaGFsbGVuZ2UtYXQtYWxs' }),
      ),
      /no registration you started/,
    );
    // Five minutes later the challenge is gone.
    clock.advance(5 * 60_000 + 1_000);
    await refused(await post(new SoftAuthenticator(ORIGIN, 'localhost').register(made)), /no registration you started/);
    assert.equal(body(await call('GET', '/auth/passkeys', undefined, me.headers)).data.length, 1);
  });

  test("the same credential twice is 409; removing is the owner's only (404 for anyone else)", async () => {
    const me = await withPasskey();
    const options = body(await call('POST', '/auth/passkeys/registration/options', {}, me.headers)).data;
    const twice = await call('POST', '/auth/passkeys', { credential: me.device.register(options) }, me.headers);
    assert.equal(twice.statusCode, 409);
    const stranger = await signedInUser(t.app);
    assert.equal(
      (await call('DELETE', `/auth/passkeys/${me.passkey.id}`, undefined, stranger.headers)).statusCode,
      404,
    );
    const removed = await call('DELETE', `/auth/passkeys/${me.passkey.id}`, undefined, me.headers);
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(body(removed).data, { id: me.passkey.id, removed: true });
    // A removed passkey no longer signs in.
    const res = await verify(me.device.authenticate(await signInOptions()));
    assert.equal(res.statusCode, 401);
  });
});

describe('signing in with a passkey', () => {
  test('a discoverable passkey signs in like a login; the session has proved a second factor', async () => {
    const me = await withPasskey();
    const options = await signInOptions();
    assert.equal(options.rpId, 'localhost');
    assert.equal(options.userVerification, 'required');
    assert.equal(options.allowCredentials, undefined);
    const res = await verify(me.device.authenticate(options));
    assert.equal(res.statusCode, 200, res.payload);
    const session = body(res).data;
    assert.equal(session.user.id, me.user.id);
    assert.equal(session.tokenType, 'Bearer');
    assert.equal((await call('GET', '/auth/me', undefined, bearer(session.accessToken))).statusCode, 200);
    const row = await t.app.kernel.db
      .selectFrom('auth_sessions')
      .selectAll()
      .where('user_id', '=', me.user.id)
      .orderBy(insertionOrder(), 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(row.factor_verified_at, clock.now().toISOString());
    const stored = await t.app.kernel.db
      .selectFrom('user_passkeys')
      .select(['counter', 'last_used_at'])
      .where('id', '=', me.passkey.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(stored.counter), 1);
    assert.equal(stored.last_used_at, clock.now().toISOString());
  });

  test('refused: a replayed answer, a counter that does not move on, another origin, a forged signature', async () => {
    const me = await withPasskey();
    const answer = me.device.authenticate(await signInOptions());
    assert.equal((await verify(answer)).statusCode, 200);
    const replay = await verify(answer);
    assert.equal(replay.statusCode, 401);
    assert.equal(body(replay).error?.code, 'INVALID_CREDENTIALS');
    // A clone of the authenticator shows a counter the server has seen: refused, counter kept.
    const cloned = await verify(me.device.authenticate(await signInOptions(), { counter: 1 }));
    assert.equal(cloned.statusCode, 401);
    const stored = await t.app.kernel.db
      .selectFrom('user_passkeys')
      .select('counter')
      .where('id', '=', me.passkey.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(stored.counter), 1);
    assert.equal(
      (await verify(me.device.authenticate(await signInOptions(), { origin: 'https://evil.example' }))).statusCode,
      401,
    );
    const forged = me.device.authenticate(await signInOptions());
    forged.response.signature = new SoftAuthenticator(ORIGIN, 'localhost').authenticate(
      await signInOptions(),
    ).response.signature;
    assert.equal((await verify(forged)).statusCode, 401);
    // A challenge the server never made.
    assert.equal(
      (await verify(me.device.authenticate(await signInOptions(), { challenge: 'bm90LW91ci1jaGFsbGVuZ2UtYXQtYWxs' })))
        .statusCode,
      401,
    );
    // The right answer still works: the counter moves on.
    assert.equal((await verify(me.device.authenticate(await signInOptions()))).statusCode, 200);
  });

  test("as the second step of a password sign-in: the options name the user's passkeys; the answer completes it", async () => {
    const me = await withPasskey();
    const setup = body(await call('POST', '/auth/totp/setup', {}, me.headers)).data;
    assert.equal(
      (await call('POST', '/auth/totp/enable', { code: totpAt(setup.secret, clock.now()) }, me.headers)).statusCode,
      200,
    );
    const login = await call('POST', '/auth/login', { email: me.user.email, password: me.user.password });
    const { mfaToken, methods } = body(login).error!.details;
    assert.deepEqual(methods, ['totp', 'recovery_code', 'passkey']);
    const options = await signInOptions(mfaToken);
    assert.deepEqual(
      options.allowCredentials.map((c: { id: string }) => c.id),
      [me.device.id],
    );
    // Another user's passkey does not answer this sign-in.
    const other = await withPasskey();
    const theirs = await verify(other.device.authenticate(options), mfaToken);
    assert.equal(theirs.statusCode, 401);
    const done = await verify(me.device.authenticate(await signInOptions(mfaToken)), mfaToken);
    assert.equal(done.statusCode, 200, done.payload);
    assert.equal(body(done).data.user.id, me.user.id);
    // An unknown sign-in gets no options.
    assert.equal(
      (await call('POST', '/auth/passkeys/authentication/options', { mfaToken: 'x'.repeat(40) })).statusCode,
      401,
    );
  });

  test('a passkey proves a session again for approvals (POST /auth/step-up)', async () => {
    const me = await withPasskey();
    const options = body(await call('POST', '/auth/step-up/options', {}, me.headers)).data;
    assert.deepEqual(
      options.allowCredentials.map((c: { id: string }) => c.id),
      [me.device.id],
    );
    const res = await call('POST', '/auth/step-up', { credential: me.device.authenticate(options) }, me.headers);
    assert.equal(res.statusCode, 200, res.payload);
    const row = await t.app.kernel.db
      .selectFrom('auth_sessions')
      .select('factor_verified_at')
      .where('id', '=', me.sessionId)
      .executeTakeFirstOrThrow();
    assert.equal(row.factor_verified_at, clock.now().toISOString());
    // Another user's challenge is not this session's proof.
    const other = await withPasskey();
    const theirs = body(await call('POST', '/auth/step-up/options', {}, other.headers)).data;
    assert.equal(
      (await call('POST', '/auth/step-up', { credential: me.device.authenticate(theirs) }, me.headers)).statusCode,
      403,
    );
  });
});

describe('on an IP-address public URL', () => {
  let ipApp: TestApp;
  before(async () => {
    ipApp = await createTestApp();
  });
  after(async () => ipApp.close());

  test('the ceremonies answer 503 NOT_CONFIGURED saying passkeys need a host name', async () => {
    const me = await signedInUser(ipApp.app);
    for (const url of ['/auth/passkeys/registration/options', '/auth/passkeys/authentication/options']) {
      const res = await ipApp.inject({ method: 'POST', url: `/api/v1${url}`, headers: me.headers, payload: {} });
      assert.equal(res.statusCode, 503, res.payload);
      assert.equal(body(res).error?.code, 'NOT_CONFIGURED');
      assert.match(body(res).error!.message, /host name/);
    }
  });
});

describe('on a plain-http public URL other than localhost', () => {
  let httpApp: TestApp;
  before(async () => {
    httpApp = await createTestApp({ env: { GANTRY_PUBLIC_URL: 'http://gantry.example:8080' } });
  });
  after(async () => httpApp.close());

  test('the ceremonies answer 503 NOT_CONFIGURED saying passkeys need https; the account center offers no button', async () => {
    const me = await signedInUser(httpApp.app);
    for (const url of ['/auth/passkeys/registration/options', '/auth/passkeys/authentication/options']) {
      const res = await httpApp.inject({ method: 'POST', url: `/api/v1${url}`, headers: me.headers, payload: {} });
      assert.equal(res.statusCode, 503, res.payload);
      assert.equal(body(res).error?.code, 'NOT_CONFIGURED');
      assert.match(body(res).error!.message, /need https/);
    }
    const cookie = `gantry_session=${await httpApp.app.services.identity.browserSessions.start(me.user.id)}`;
    const page = await httpApp.inject({ url: '/account', headers: { cookie } });
    assert.equal(page.statusCode, 200);
    assert.match(page.payload, /Passkeys need https/);
    assert.doesNotMatch(page.payload, /data-passkey=/);
    assert.doesNotMatch(String(page.headers['content-security-policy']), /script-src/);
  });
});
