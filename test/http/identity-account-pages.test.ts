import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { bearer, makeUser, signedInUser } from '../helpers/factories.js';
import {
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
import { totpAt } from '../helpers/second-factors.js';
import { ManualClock } from '../../src/lib/clock.js';

/**
 * The account center over HTTP (docs/identity.md, Account center): sign-in first, each form's
 * effect and refusals, CSRF bound to the browser session, sign-out. The browser test
 * (test/e2e/account-center.test.ts) drives the same pages in Chromium.
 */
describe('the account center (GET /account and its forms)', () => {
  let t: ReturnType<typeof withJson>;
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  before(async () => {
    t = withJson(await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '20' } }));
  });
  after(async () => t.close());

  /** Signs a browser in on /account itself; returns its cookie header and the page's CSRF value. */
  async function browser(email: string, password: string) {
    const first = await t.inject({
      url: '/account',
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux) Firefox/140.0' },
    });
    const cookies = cookiesFrom(first.headers['set-cookie'] as string[] | undefined);
    const signed = await t.inject({
      method: 'POST',
      url: '/account',
      headers: {
        ...FORM_HEADERS,
        cookie: cookieHeader(cookies),
        'user-agent': 'Mozilla/5.0 (X11; Linux) Firefox/140.0',
      },
      payload: form({ action: 'signin', csrf: hiddenInput(first.body, 'csrf')!, email, password }),
    });
    assert.equal(signed.statusCode, 303, signed.body);
    assert.equal(signed.headers.location, '/account');
    Object.assign(cookies, cookiesFrom(signed.headers['set-cookie'] as string[] | undefined));
    const cookie = cookieHeader(cookies);
    const page = await t.inject({ url: '/account', headers: { cookie } });
    return { cookie, csrf: hiddenInput(page.body, 'csrf')!, page };
  }
  const post = (path: string, cookie: string, data: Record<string, string>) =>
    t.inject({ method: 'POST', url: path, headers: { ...FORM_HEADERS, cookie }, payload: form(data) });

  test('without a browser session it is the sign-in form; signed in, every section of the account', async () => {
    const first = await t.inject('/account');
    assert.equal(first.statusCode, 200);
    assert.match(first.body, /<h1>Sign in to your account<\/h1>/);
    assert.match(first.body, /name="password"/);
    assert.match(String(first.headers['content-security-policy']), /^default-src 'none'; style-src 'self';/);
    assert.doesNotMatch(String(first.headers['content-security-policy']), /script-src/, 'no passkeys on an IP origin');

    const user = await makeUser(t.app, { fullName: 'Grace Pages' });
    const { page } = await browser(user.email, user.password);
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(String(page.headers['cache-control']), /no-store/);
    for (const heading of [
      'Profile',
      'Password',
      'Passkeys',
      'Two-step sign-in',
      'Sessions',
      'Connected apps',
      'Sign out',
    ])
      assert.match(page.body, new RegExp(`<h2 id="[a-z-]+-h">${heading}</h2>`), heading);
    assert.match(page.body, /Grace Pages/);
    assert.match(page.body, /<strong>Firefox on Linux<\/strong> <span class="badge">This session<\/span>/);
    assert.match(page.body, /<time datetime="2026-03-01T10:00:00.000Z">1 Mar 2026, 10:00 UTC<\/time>/);
    assert.match(page.body, /id="passkeys-unavailable">Passkeys need a host name/);
    assert.doesNotMatch(page.body, /data-passkey=/);
  });

  test('every form needs the CSRF value of this browser session', async () => {
    const user = await makeUser(t.app);
    const mine = await browser(user.email, user.password);
    const other = await browser(user.email, user.password);
    assert.equal((await post('/account/name', mine.cookie, { full_name: 'X' })).statusCode, 403);
    assert.equal((await post('/account/name', mine.cookie, { full_name: 'X', csrf: other.csrf })).statusCode, 403);
    assert.equal((await post('/account/sign-out', mine.cookie, { csrf: other.csrf })).statusCode, 403);
    assert.equal((await t.app.services.identity.getUser(user.id)).full_name, 'Test User');
    // A form without a session at all is the sign-in form again.
    const signedOut = await post('/account/name', '', { full_name: 'X', csrf: mine.csrf });
    assert.equal(signedOut.statusCode, 401);
    assert.match(signedOut.body, /Your session has ended/);
  });

  test('name, email and password: each saved, or the page again saying what was wrong', async () => {
    const user = await makeUser(t.app);
    const b = await browser(user.email, user.password);
    const named = await post('/account/name', b.cookie, { csrf: b.csrf, full_name: 'Ada Lovelace' });
    assert.equal(named.statusCode, 303);
    assert.equal(named.headers.location, '/account?done=name');
    assert.equal((await t.app.services.identity.getUser(user.id)).full_name, 'Ada Lovelace');
    assert.match(
      (await t.inject({ url: '/account?done=name', headers: { cookie: b.cookie } })).body,
      /role="status">Your name is saved/,
    );
    const bad = await post('/account/name', b.cookie, { csrf: b.csrf, full_name: 'two\nlines' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /role="alert"[^>]*>fullName must be a single line/);
    assert.match(bad.body, /<details class="account-form" id="name" open>/);

    const wrongPassword = await post('/account/email', b.cookie, {
      csrf: b.csrf,
      new_email: 'new@example.test',
      password: 'nope nope',
    });
    assert.equal(wrongPassword.statusCode, 403);
    assert.match(wrongPassword.body, /<details class="account-form" id="email" open>/);
    const emailed = await post('/account/email', b.cookie, {
      csrf: b.csrf,
      new_email: `moved-${user.id.slice(0, 8)}@example.test`,
      password: user.password,
    });
    assert.equal(emailed.headers.location, '/account?done=email');

    const other = await signedInUser(t.app, { email: `second-${user.id.slice(0, 8)}@example.test` });
    const elsewhere = await t.app.services.identity.sessions.start(user.id);
    const short = await post('/account/password', b.cookie, {
      csrf: b.csrf,
      current_password: user.password,
      new_password: 'short',
    });
    assert.equal(short.statusCode, 400);
    const wrong = await post('/account/password', b.cookie, {
      csrf: b.csrf,
      current_password: 'not it at all',
      new_password: 'a brand new password',
    });
    assert.equal(wrong.statusCode, 403);
    assert.match(wrong.body, /The current password is wrong/);
    const changed = await post('/account/password', b.cookie, {
      csrf: b.csrf,
      current_password: user.password,
      new_password: 'a brand new password',
    });
    assert.equal(changed.headers.location, '/account?done=password');
    // This browser stays signed in; the user's other sessions end; another user's do not.
    assert.equal((await t.inject({ url: '/account', headers: { cookie: b.cookie } })).statusCode, 200);
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(elsewhere.accessToken) })).statusCode, 401);
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: other.headers })).statusCode, 200);
  });

  test('sessions: another one ended at once; ending this one signs the browser out', async () => {
    const user = await makeUser(t.app);
    const b = await browser(user.email, user.password);
    const api = await t.app.services.identity.sessions.start(user.id, { userAgent: 'curl/8.4.0', ip: '10.1.2.3' });
    const page = await t.inject({ url: '/account', headers: { cookie: b.cookie } });
    assert.match(page.body, /<strong>curl<\/strong><br><span class="muted">10\.1\.2\.3 · /);
    const end = await post(`/account/sessions/${api.sessionId}/end`, b.cookie, { csrf: b.csrf });
    assert.equal(end.headers.location, '/account?done=session-ended');
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: bearer(api.accessToken) })).statusCode, 401);
    // Someone else's session is not found, and stays.
    const stranger = await signedInUser(t.app);
    const theirs = await post(`/account/sessions/${stranger.sessionId}/end`, b.cookie, { csrf: b.csrf });
    assert.equal(theirs.statusCode, 404);
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: stranger.headers })).statusCode, 200);

    const current =
      /action="\/account\/sessions\/([0-9a-f-]+)\/end"[^>]*><input type="hidden" name="csrf" value="[^"]*"><button[^>]*aria-label="Sign out of this session"/.exec(
        (await t.inject({ url: '/account', headers: { cookie: b.cookie } })).body,
      )![1];
    const out = await post(`/account/sessions/${current}/end`, b.cookie, { csrf: b.csrf });
    assert.equal(out.statusCode, 200);
    assert.match(out.body, /You are signed out/);
    assert.match(String(out.headers['set-cookie']), /gantry_session=;.*Max-Age=0/);
    assert.match((await t.inject({ url: '/account', headers: { cookie: b.cookie } })).body, /Sign in to your account/);
  });

  test('connected apps: listed with what they may do, and revoked at once', async () => {
    const user = await makeUser(t.app);
    const client = await makeClient(t, { name: 'Reports App' });
    const { verifier, challenge } = pkcePair();
    const { location } = await authorizeAndAllow(
      t,
      authorizeQuery(client.clientId, challenge),
      user.email,
      user.password,
    );
    const tokens = await t.inject({
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
    const { refresh_token } = tokens.json();
    const b = await browser(user.email, user.password);
    assert.match(
      b.page.body,
      /<strong>Reports App<\/strong><br><span class="muted">Allowed <time[^>]*>[^<]*<\/time>\. It can: See your email address and whether it is confirmed/,
    );
    const revoked = await post('/account/apps/revoke', b.cookie, { csrf: b.csrf, client_id: client.clientId });
    assert.equal(revoked.headers.location, '/account?done=app-revoked');
    assert.deepEqual(await t.app.services.oauth.listGrants(user.id), []);
    const refresh = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
      payload: form({ grant_type: 'refresh_token', refresh_token }),
    });
    assert.equal(refresh.json().error, 'invalid_grant');
    assert.match(
      (await t.inject({ url: '/account', headers: { cookie: b.cookie } })).body,
      /No apps can reach your account/,
    );
  });

  test('two-step sign-in from the page: QR code and key, a wrong code keeps the setup, the codes shown once, off with a code', async () => {
    const user = await makeUser(t.app);
    const b = await browser(user.email, user.password);
    const setup = await post('/account/two-step/setup', b.cookie, { csrf: b.csrf });
    assert.equal(setup.statusCode, 200);
    assert.match(
      setup.body,
      /<svg role="img" aria-label="QR code to scan with your authenticator app" xmlns="http:\/\/www\.w3\.org\/2000\/svg"/,
    );
    const key = /<code class="secret">([A-Z2-7 ]+)<\/code>/.exec(setup.body)![1].replaceAll(' ', '');
    const wrong = await post('/account/two-step/enable', b.cookie, { csrf: b.csrf, code: '000000' });
    assert.equal(wrong.statusCode, 403);
    assert.match(wrong.body, /That code is not right/);
    assert.ok(wrong.body.includes(key.slice(0, 4)), 'the same key again');
    const on = await post('/account/two-step/enable', b.cookie, { csrf: b.csrf, code: totpAt(key, clock.now()) });
    assert.equal(on.statusCode, 200);
    const codes = [...on.body.matchAll(/<li><code>([a-z2-9-]+)<\/code><\/li>/g)].map((m) => m[1]);
    assert.equal(codes.length, 10);
    assert.match(
      (await t.inject({ url: '/account', headers: { cookie: b.cookie } })).body,
      /<span class="badge">On<\/span> since <time[^>]*>[^<]*<\/time>\. 10 recovery codes left/,
    );

    const noCode = await post('/account/two-step/disable', b.cookie, { csrf: b.csrf, code: '' });
    assert.equal(noCode.statusCode, 403);
    assert.match(noCode.body, /<details class="account-form" id="two-step-off" open>/);
    const off = await post('/account/two-step/disable', b.cookie, { csrf: b.csrf, code: codes[0] });
    assert.equal(off.headers.location, '/account?done=two-step-off');
    assert.equal((await t.app.services.identity.factors.state(user.id)).twoStep, false);
  });

  test("sign out ends this browser's session: the old cookie no longer signs in", async () => {
    const user = await makeUser(t.app);
    const b = await browser(user.email, user.password);
    const out = await post('/account/sign-out', b.cookie, { csrf: b.csrf });
    assert.equal(out.statusCode, 200);
    assert.match(out.body, /You are signed out/);
    assert.match(out.body, /href="\/account">Sign in again/);
    const again = await t.inject({ url: '/account', headers: { cookie: b.cookie } });
    assert.match(again.body, /Sign in to your account/);
  });
});
