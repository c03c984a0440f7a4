import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, insertionOrder, type TestApp } from '../helpers/app.js';
import { bearer, makeUser, TEST_PASSWORD } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import {
  AUTHORIZE,
  authorizeAndAllow,
  authorizeQuery,
  basic,
  cookieHeader,
  cookiesFrom,
  form,
  FORM_HEADERS,
  hiddenInput,
  makeClient,
  pkcePair,
  REDIRECT,
} from '../helpers/oauth.js';

/**
 * Attacks on sign-in, replayed through the API and the pages; each must now fail to get in.
 * (docs/kernel.md "Unconfirmed accounts", "Password changes"; docs/oauth.md "Revocation".)
 */
let t: TestApp;
const clock = new ManualClock('2026-03-01T10:00:00Z');
before(async () => {
  t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

let seq = 0;
const address = (tag: string) => `${tag}-${Date.now().toString(36)}-${seq++}@example.test`;
let ip = 0;
const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    payload: payload as object,
    headers,
    remoteAddress: `10.7.${(ip >> 8) & 255}.${ip++ & 255}`,
  });
const json = <T = Record<string, unknown>>(res: { payload: string }) =>
  JSON.parse(res.payload) as {
    data: T;
    error: { code: string; message: string; details?: Array<{ field: string }> } | null;
  };

async function lastMail(to: string, kind: string) {
  return t.app.kernel.db
    .selectFrom('mail_outbox')
    .selectAll()
    .where('to_address', '=', to)
    .where('kind', '=', kind)
    .orderBy(insertionOrder(), 'desc')
    .executeTakeFirstOrThrow();
}
const tokenIn = (text: string) => decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(text)![1]);
const codeIn = (text: string) => /code is (\d{6})/.exec(text)![1];

const TOKEN = '/api/v1/oauth/token';
const tokenCall = (payload: Record<string, string>, auth: string) =>
  t.inject({ method: 'POST', url: TOKEN, headers: { ...FORM_HEADERS, authorization: auth }, payload: form(payload) });
const userinfo = (accessToken: string) => t.inject({ url: '/api/v1/oauth/userinfo', headers: bearer(accessToken) });

/** A third-party app the user allowed: its live token pair. */
async function thirdPartyTokens(email: string, password: string) {
  const client = await makeClient(t);
  const { verifier, challenge } = pkcePair();
  const { location } = await authorizeAndAllow(t, authorizeQuery(client.clientId, challenge), email, password);
  const res = await tokenCall(
    {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    },
    basic(client.clientId, client.clientSecret!),
  );
  assert.equal(res.statusCode, 200, res.payload);
  const body = JSON.parse(res.payload) as { access_token: string; refresh_token: string };
  return { client, ...body, auth: basic(client.clientId, client.clientSecret!) };
}

describe('third-party grants end with a password reset or change', () => {
  test('after a reset, the app refresh token is invalid_grant and its access token is refused at userinfo', async () => {
    const user = await makeUser(t.app);
    const app = await thirdPartyTokens(user.email, user.password);
    // Before: the refresh token refreshes and the access token reads userinfo.
    const before = await tokenCall({ grant_type: 'refresh_token', refresh_token: app.refresh_token }, app.auth);
    assert.equal(before.statusCode, 200);
    const live = JSON.parse(before.payload) as { access_token: string; refresh_token: string };
    assert.equal((await userinfo(live.access_token)).statusCode, 200);

    await post('/auth/forgot-password', { email: user.email });
    const { resetToken } = json<{ resetToken: string }>(
      await post('/auth/exchange-recovery-code', {
        email: user.email,
        code: codeIn((await lastMail(user.email, 'password_recovery')).body_text),
      }),
    ).data;
    assert.equal((await post('/auth/reset-password', { resetToken, password: 'a fresh password' })).statusCode, 200);

    const refused = await tokenCall({ grant_type: 'refresh_token', refresh_token: live.refresh_token }, app.auth);
    assert.equal(refused.statusCode, 400);
    assert.equal(JSON.parse(refused.payload).error, 'invalid_grant');
    assert.equal((await userinfo(live.access_token)).statusCode, 401);
    const grants = await t.app.kernel.db
      .selectFrom('oauth_grants')
      .select(['revoked_at', 'revoke_reason'])
      .where('user_id', '=', user.id)
      .execute();
    assert.ok(grants.length > 0);
    for (const g of grants) assert.equal(g.revoke_reason, 'password_reset');
    // The user's choice of apps stays: a confirmed user's consent was theirs.
    assert.ok(
      await t.app.kernel.db
        .selectFrom('oauth_consents')
        .select('client_id')
        .where('user_id', '=', user.id)
        .executeTakeFirst(),
    );
  });

  test('the reset page, which says every session was signed out, ends the app grants too', async () => {
    const user = await makeUser(t.app);
    const app = await thirdPartyTokens(user.email, user.password);
    await post('/auth/forgot-password', { email: user.email });
    const code = codeIn((await lastMail(user.email, 'password_recovery')).body_text);
    const done = await t.inject({
      method: 'POST',
      url: '/auth/reset-password',
      headers: FORM_HEADERS,
      payload: form({ email: user.email, code, password: 'page password 1' }),
      remoteAddress: '10.7.200.1',
    });
    assert.equal(done.statusCode, 200);
    assert.match(done.payload, /every session was signed out/);
    assert.equal(
      JSON.parse((await tokenCall({ grant_type: 'refresh_token', refresh_token: app.refresh_token }, app.auth)).payload)
        .error,
      'invalid_grant',
    );
    assert.equal((await userinfo(app.access_token)).statusCode, 401);
  });

  test('a password change ends the app grants; the caller keeps the session; a pending email change is dropped', async () => {
    const user = await makeUser(t.app);
    const app = await thirdPartyTokens(user.email, user.password);
    const session = await t.app.services.identity.sessions.start(user.id);
    // Whoever knew the old password asked to move the account to their own address.
    const thief = address('thief');
    assert.equal(
      (await post('/auth/change-email', { newEmail: thief, password: user.password }, bearer(session.accessToken)))
        .statusCode,
      202,
    );
    const moveToken = tokenIn((await lastMail(thief, 'email_change')).body_text);

    const changed = await post(
      '/auth/change-password',
      { currentPassword: user.password, newPassword: 'changed password 1' },
      bearer(session.accessToken),
    );
    assert.equal(changed.statusCode, 200);
    assert.equal(
      JSON.parse((await tokenCall({ grant_type: 'refresh_token', refresh_token: app.refresh_token }, app.auth)).payload)
        .error,
      'invalid_grant',
    );
    assert.equal((await userinfo(app.access_token)).statusCode, 401);
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(session.accessToken) })).statusCode, 200);
    const moved = await post('/auth/confirm-email', { token: moveToken });
    assert.equal(moved.statusCode, 410);
    assert.equal((await t.app.services.identity.findUserById(user.id))!.email, user.email);
    assert.match((await lastMail(user.email, 'password_changed')).body_text, /lost their access/);
  });

  test("another user's grants are untouched", async () => {
    const user = await makeUser(t.app);
    const bystander = await makeUser(t.app);
    const theirs = await thirdPartyTokens(bystander.email, bystander.password);
    const session = await t.app.services.identity.sessions.start(user.id);
    assert.equal(
      (
        await post(
          '/auth/change-password',
          { currentPassword: user.password, newPassword: 'changed password 2' },
          bearer(session.accessToken),
        )
      ).statusCode,
      200,
    );
    assert.equal(
      (await tokenCall({ grant_type: 'refresh_token', refresh_token: theirs.refresh_token }, theirs.auth)).statusCode,
      200,
    );
  });
});

describe('pre-account takeover: the mailbox owner takes an unconfirmed account over clean', () => {
  async function preRegistered() {
    const victim = address('erin');
    const reg = await post('/auth/register', { email: victim, password: 'attacker-pass-1' });
    assert.equal(reg.statusCode, 201);
    const attacker = json<{ accessToken: string; refreshToken: string }>(
      await post('/auth/login', { email: victim, password: 'attacker-pass-1' }),
    ).data;
    assert.ok(attacker.accessToken, 'an unconfirmed account can sign in (docs/kernel.md)');
    return { victim, attacker, userId: json<{ user: { id: string } }>(reg).data.user.id };
  }

  test('a magic-link sign-in (API) drops the earlier password, sessions, grants, consents and pending email change', async () => {
    const { victim, attacker, userId } = await preRegistered();
    const app = await thirdPartyTokens(victim, 'attacker-pass-1');
    const attackerMove = address('attacker-inbox');
    assert.equal(
      (
        await post(
          '/auth/change-email',
          { newEmail: attackerMove, password: 'attacker-pass-1' },
          bearer(attacker.accessToken),
        )
      ).statusCode,
      202,
    );
    const moveToken = tokenIn((await lastMail(attackerMove, 'email_change')).body_text);

    // The real owner signs in by link.
    assert.equal((await post('/auth/magic-link', { email: victim })).statusCode, 202);
    const owner = await post('/auth/magic-link/verify', {
      token: tokenIn((await lastMail(victim, 'magic_link')).body_text),
    });
    assert.equal(owner.statusCode, 200);
    const ownerTokens = json<{ accessToken: string }>(owner).data;

    // The attacker's password no longer opens the (now confirmed) account.
    const login = await post('/auth/login', { email: victim, password: 'attacker-pass-1' });
    assert.equal(login.statusCode, 401);
    assert.equal(json(login).error!.code, 'INVALID_CREDENTIALS');
    const row = await t.app.services.identity.findUserById(userId);
    assert.equal(row!.password_hash, null);
    assert.notEqual(row!.email_verified_at, null);
    // Nor does anything the attacker already held.
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(attacker.accessToken) })).statusCode, 401);
    assert.equal((await post('/auth/refresh', { refreshToken: attacker.refreshToken })).statusCode, 401);
    assert.equal(
      JSON.parse((await tokenCall({ grant_type: 'refresh_token', refresh_token: app.refresh_token }, app.auth)).payload)
        .error,
      'invalid_grant',
    );
    assert.equal((await userinfo(app.access_token)).statusCode, 401);
    assert.equal(
      await t.app.kernel.db
        .selectFrom('oauth_consents')
        .select('client_id')
        .where('user_id', '=', userId)
        .executeTakeFirst(),
      undefined,
    );
    assert.equal((await post('/auth/confirm-email', { token: moveToken })).statusCode, 410);
    assert.equal((await t.app.services.identity.findUserById(userId))!.email, victim);
    // The owner is signed in, and sets a password through the reset flow.
    const me = await t.inject({ url: '/api/v1/auth/me', headers: bearer(ownerTokens.accessToken) });
    assert.equal(json<{ emailVerified: boolean }>(me).data.emailVerified, true);
    await post('/auth/forgot-password', { email: victim });
    const { resetToken } = json<{ resetToken: string }>(
      await post('/auth/exchange-recovery-code', {
        email: victim,
        code: codeIn((await lastMail(victim, 'password_recovery')).body_text),
      }),
    ).data;
    assert.equal((await post('/auth/reset-password', { resetToken, password: 'owner password 1' })).statusCode, 200);
    assert.equal((await post('/auth/login', { email: victim, password: 'owner password 1' })).statusCode, 200);
  });

  test('a reset of an unconfirmed account also forgets the consents given before it', async () => {
    const { victim, userId } = await preRegistered();
    await thirdPartyTokens(victim, 'attacker-pass-1');
    await post('/auth/forgot-password', { email: victim });
    const { resetToken } = json<{ resetToken: string }>(
      await post('/auth/exchange-recovery-code', {
        email: victim,
        code: codeIn((await lastMail(victim, 'password_recovery')).body_text),
      }),
    ).data;
    assert.equal((await post('/auth/reset-password', { resetToken, password: 'owner password 2' })).statusCode, 200);
    assert.equal((await post('/auth/login', { email: victim, password: 'attacker-pass-1' })).statusCode, 401);
    assert.equal(
      await t.app.kernel.db
        .selectFrom('oauth_consents')
        .select('client_id')
        .where('user_id', '=', userId)
        .executeTakeFirst(),
      undefined,
    );
  });

  test('a magic link on an account already confirmed keeps its password and sessions', async () => {
    const user = await makeUser(t.app, { verified: true });
    const session = await t.app.services.identity.sessions.start(user.id);
    await post('/auth/magic-link', { email: user.email });
    assert.equal(
      (await post('/auth/magic-link/verify', { token: tokenIn((await lastMail(user.email, 'magic_link')).body_text) }))
        .statusCode,
      200,
    );
    assert.equal((await post('/auth/login', { email: user.email, password: TEST_PASSWORD })).statusCode, 200);
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(session.accessToken) })).statusCode, 200);
  });
});

describe('public clients are asked again (RFC 8252 8.6)', () => {
  test('after one consent, a new request with a fresh PKCE pair shows the consent page instead of a code', async () => {
    const pub = await makeClient(t, { type: 'public', name: 'PubApp' });
    const user = await makeUser(t.app);
    const first = await authorizeAndAllow(
      t,
      authorizeQuery(pub.clientId, pkcePair().challenge),
      user.email,
      user.password,
    );
    assert.ok(first.location.searchParams.get('code'));
    // Someone else's request, with their own PKCE pair, in the user's signed-in browser.
    const again = await t.inject({
      url: authorizeQuery(pub.clientId, pkcePair().challenge, { state: 'atk' }),
      headers: { cookie: cookieHeader(first.cookies) },
    });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers.location, undefined);
    assert.match(again.payload, /PubApp wants to access your Gantry account/);
    assert.match(again.payload, /name="decision" value="allow"/);
    const codes = await t.app.kernel.db
      .selectFrom('oauth_codes')
      .select('code_hash')
      .where('client_id', '=', pub.clientId)
      .execute();
    assert.equal(codes.length, 1, 'no code was issued without the user');
  });

  test('a confidential client the user allowed still skips the page', async () => {
    const conf = await makeClient(t);
    const user = await makeUser(t.app);
    const first = await authorizeAndAllow(
      t,
      authorizeQuery(conf.clientId, pkcePair().challenge),
      user.email,
      user.password,
    );
    const again = await t.inject({
      url: authorizeQuery(conf.clientId, pkcePair().challenge),
      headers: { cookie: cookieHeader(first.cookies) },
    });
    assert.equal(again.statusCode, 302);
    assert.ok(new URL(again.headers.location as string).searchParams.get('code'));
  });
});

/** A browser: a cookie jar over t.inject. */
function browser(initial: Record<string, string> = {}) {
  const jar: Record<string, string> = { ...initial };
  return {
    jar,
    async get(url: string) {
      const res = await t.inject({ url, headers: { cookie: cookieHeader(jar) } });
      Object.assign(jar, cookiesFrom(res.headers['set-cookie'] as string[] | string | undefined));
      return res;
    },
    async post(url: string, data: Record<string, string>, headers: Record<string, string> = {}) {
      const res = await t.inject({
        method: 'POST',
        url,
        headers: { ...FORM_HEADERS, cookie: cookieHeader(jar), ...headers },
        payload: form(data),
        remoteAddress: `10.8.${(ip >> 8) & 255}.${ip++ & 255}`,
      });
      Object.assign(jar, cookiesFrom(res.headers['set-cookie'] as string[] | string | undefined));
      return res;
    },
  };
}
const magicPath = (text: string) => /http:\/\/127\.0\.0\.1:8080(\/auth\/magic\?token=[^\s]+)/.exec(text)![1];
const spent = async (userId: string) =>
  (
    await t.app.kernel.db
      .selectFrom('one_time_tokens')
      .select('consumed_at')
      .where('user_id', '=', userId)
      .where('purpose', '=', 'magic_link')
      .executeTakeFirstOrThrow()
  ).consumed_at;

describe('login CSRF on POST /auth/magic', () => {
  test("a cross-site form posting the attacker's own link does not sign the victim's browser in", async () => {
    const attacker = await makeUser(t.app);
    await post('/auth/magic-link', { email: attacker.email });
    const link = magicPath((await lastMail(attacker.email, 'magic_link')).body_text);
    const token = new URL(link, 'http://x').searchParams.get('token')!;
    // The attacker even fetches the landing page himself, for a csrf value of his own browser.
    const own = browser();
    const csrf = hiddenInput((await own.get(link)).payload, 'csrf')!;
    assert.ok(csrf);

    const victim = browser();
    const attempts: Array<{ data: Record<string, string>; headers: Record<string, string> }> = [
      { data: { token }, headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } },
      { data: { token, csrf }, headers: { origin: 'https://evil.example' } },
      { data: { token, csrf }, headers: {} },
    ];
    for (const attempt of attempts) {
      const res = await victim.post('/auth/magic', attempt.data, attempt.headers);
      assert.equal(res.statusCode, 403, JSON.stringify(attempt.headers));
      assert.match(res.payload, /cannot be accepted/);
      assert.equal(victim.jar.gantry_session, undefined);
    }
    assert.equal(await spent(attacker.id), null, 'the refused posts did not spend the link');
    // A foreign Origin is refused even with this browser's own page values.
    const page = await victim.get(link);
    const foreign = await victim.post(
      '/auth/magic',
      { token, csrf: hiddenInput(page.payload, 'csrf')! },
      { origin: 'https://evil.example' },
    );
    assert.equal(foreign.statusCode, 403);
    assert.equal(await spent(attacker.id), null);
  });

  test('the link opened in any browser signs in through its own page (Origin null: our pages send no referrer)', async () => {
    const user = await makeUser(t.app);
    await post('/auth/magic-link', { email: user.email });
    const link = magicPath((await lastMail(user.email, 'magic_link')).body_text);
    const other = browser();
    const page = await other.get(link);
    assert.equal(page.statusCode, 200);
    assert.ok(other.jar.gantry_presession, 'the landing page sets the pre-session cookie its csrf value is bound to');
    assert.notEqual(await spent(user.id), undefined);
    assert.equal(await spent(user.id), null, 'opening the page spends nothing');
    const res = await other.post(
      '/auth/magic',
      { token: hiddenInput(page.payload, 'token')!, csrf: hiddenInput(page.payload, 'csrf')! },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    assert.equal(res.statusCode, 200);
    assert.match(res.payload, /You are signed in/);
    assert.ok(other.jar.gantry_session);
    assert.notEqual(await spent(user.id), null);
  });
});

describe('a sign-in link continues an authorize request only in the browser that asked for it', () => {
  test("the victim's click on a link the attacker asked for does not complete the attacker's request", async () => {
    const app = await makeClient(t, { name: 'Trusted App' });
    const alice = await makeUser(t.app);
    // Alice allowed this app before, so a continued request would need no click from her.
    await authorizeAndAllow(t, authorizeQuery(app.clientId, pkcePair().challenge), alice.email, alice.password);
    const codesBefore = (
      await t.app.kernel.db
        .selectFrom('oauth_codes')
        .select('code_hash')
        .where('client_id', '=', app.clientId)
        .execute()
    ).length;

    // The attacker starts a request with his own PKCE pair and asks for a link for Alice.
    const attacker = browser();
    const url = authorizeQuery(app.clientId, pkcePair().challenge, { state: 'atk' });
    const signInPage = await attacker.get(url);
    const asked = await attacker.post(AUTHORIZE, {
      csrf: hiddenInput(signInPage.payload, 'csrf')!,
      request_state: hiddenInput(signInPage.payload, 'request_state')!,
      email: alice.email,
      action: 'magic_link',
    });
    assert.equal(asked.statusCode, 200);

    // Alice opens it in her browser and presses Continue.
    const aliceBrowser = browser();
    const link = magicPath((await lastMail(alice.email, 'magic_link')).body_text);
    const page = await aliceBrowser.get(link);
    const res = await aliceBrowser.post('/auth/magic', {
      token: hiddenInput(page.payload, 'token')!,
      csrf: hiddenInput(page.payload, 'csrf')!,
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers.location, undefined);
    assert.match(res.payload, /asked for in another browser/);
    assert.ok(aliceBrowser.jar.gantry_session, 'she is signed in all the same');
    const codesAfter = (
      await t.app.kernel.db
        .selectFrom('oauth_codes')
        .select('code_hash')
        .where('client_id', '=', app.clientId)
        .execute()
    ).length;
    assert.equal(codesAfter, codesBefore, "no code was issued for the attacker's request");
  });
});

describe('account enumeration', () => {
  const decoys = async (purpose: string) =>
    Number(
      (
        await t.app.kernel.db
          .selectFrom('one_time_tokens')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('purpose', '=', purpose)
          .where('user_id', 'is', null)
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('forgot-password, magic-link and resend-confirmation do the same write for an unknown email, a secret nobody can use, and mail nothing', async () => {
    const ghost = address('ghost');
    for (const [url, purpose] of [
      ['/auth/forgot-password', 'password_recovery_code'],
      ['/auth/magic-link', 'magic_link'],
      ['/auth/resend-confirmation', 'email_confirmation'],
    ] as const) {
      const before = await decoys(purpose);
      const res = await post(url, { email: ghost });
      assert.equal(res.statusCode, 202, url);
      assert.equal(await decoys(purpose), before + 1, url);
    }
    assert.equal(
      await t.app.kernel.db.selectFrom('mail_outbox').select('id').where('to_address', '=', ghost).executeTakeFirst(),
      undefined,
    );
    // The decoy is no secret to anyone: no code works for the unknown email.
    const guess = await post('/auth/exchange-recovery-code', { email: ghost, code: '123456' });
    assert.equal(guess.statusCode, 410);
  });

  test('register keeps its 409 for a taken email: it must answer 201 with the user, which a taken email cannot give', async () => {
    const user = await makeUser(t.app);
    const res = await post('/auth/register', { email: ` ${user.email.toUpperCase()} `, password: 'another password' });
    assert.equal(res.statusCode, 409);
    assert.equal(json(res).error!.code, 'CONFLICT');
  });
});

describe('look-alike emails cannot register', () => {
  test('a fullwidth or differently encoded spelling is the same account (409), and signs in to it', async () => {
    const local = `alice${seq++}${Date.now().toString(36)}`;
    const plain = `${local}@example.test`;
    assert.equal((await post('/auth/register', { email: plain, password: 'alice password' })).statusCode, 201);
    const fullwidth = [...local].map((ch) => String.fromCharCode(ch.charCodeAt(0) + 0xfee0)).join('') + '@example.test';
    const again = await post('/auth/register', { email: fullwidth, password: 'other password' });
    assert.equal(again.statusCode, 409);
    assert.equal(json(again).error!.code, 'CONFLICT');
    const login = await post('/auth/login', { email: fullwidth, password: 'alice password' });
    assert.equal(login.statusCode, 200);
    assert.equal(json<{ user: { email: string } }>(login).data.user.email, plain);

    // An internationalized domain is one domain in either spelling.
    const idn = `jörg${seq++}@müller.example`;
    assert.equal(
      json<{ user: { email: string } }>(await post('/auth/register', { email: idn, password: 'jörg password' })).data
        .user.email,
      idn,
    );
    assert.equal(
      (await post('/auth/register', { email: idn.replace('müller', 'xn--mller-kva'), password: 'jörg password' }))
        .statusCode,
      409,
    );
  });

  test('invisible characters, a Cyrillic letter among Latin ones, a detached accent or an all-Cyrillic imitation are refused (400) at every door', async () => {
    const local = `alice${seq++}${Date.now().toString(36)}`;
    const lookalikes = [
      `${local}\u200b@example.test`, // zero-width space
      `${local}@exampl\u0435.test`, // Cyrillic е in the domain
      `\u0430${local.slice(1)}@example.test`, // Cyrillic а in the local part
      `AL\u0130CE${seq++}@example.test`, // İ lower-cases to i + a combining dot
      `\u0441\u043e\u0440\u0430@example.test`, // "сора": Cyrillic only, reads "copa"
      `${local}\u202e@example.test`, // right-to-left override
    ];
    for (const address of lookalikes) {
      const res = await post('/auth/register', { email: address, password: 'a good password' });
      assert.equal(res.statusCode, 400, JSON.stringify(address));
      assert.equal(json(res).error!.code, 'VALIDATION_FAILED');
      assert.equal(json(res).error!.details![0].field, 'email');
    }
    const me = await t.app.services.identity.sessions.start((await makeUser(t.app)).id);
    for (const [url, body, headers] of [
      ['/auth/login', { email: lookalikes[0], password: 'a good password' }, {}],
      ['/auth/magic-link', { email: lookalikes[1] }, {}],
      ['/auth/forgot-password', { email: lookalikes[2] }, {}],
      ['/auth/change-email', { newEmail: lookalikes[3], password: TEST_PASSWORD }, bearer(me.accessToken)],
    ] as const) {
      const res = await post(url, body, headers);
      assert.equal(res.statusCode, 400, url);
      assert.equal(json(res).error!.code, 'VALIDATION_FAILED', url);
    }
    // The CLI's door (createUser) too.
    await assert.rejects(
      () => t.app.services.identity.createUser({ email: lookalikes[1], password: 'a good password' }),
      (err: { status?: number }) => err.status === 400,
    );
    for (const address of lookalikes)
      assert.equal(
        await t.app.kernel.db
          .selectFrom('users')
          .select('id')
          .where('email', '=', address.toLowerCase())
          .executeTakeFirst(),
        undefined,
      );
  });

  test('ordinary internationalized addresses still register', async () => {
    for (const address of [
      `иван${seq++}@пример.example`,
      `josé${seq++}@example.test`,
      `まさ${seq++}@example.jp`,
      `δοκιμή${seq++}@παράδειγμα.example`,
    ]) {
      const res = await post('/auth/register', { email: address, password: 'a good password' });
      assert.equal(res.statusCode, 201, `${address}: ${res.payload}`);
      assert.equal(json<{ user: { email: string } }>(res).data.user.email, address.normalize('NFKC'));
    }
  });
});
