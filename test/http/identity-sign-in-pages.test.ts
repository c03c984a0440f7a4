import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createTestApp, insertionOrder } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeUser } from '../helpers/factories.js';
import {
  AUTHORIZE,
  authorizeQuery,
  cookieHeader,
  cookiesFrom,
  form,
  FORM_HEADERS,
  hiddenInput,
  makeClient,
  pkcePair,
  signIn,
} from '../helpers/oauth.js';
import { SoftAuthenticator, totpAt } from '../helpers/second-factors.js';
import { ManualClock } from '../../src/lib/clock.js';

/**
 * The sign-in pages with second factors (docs/identity.md, Pages): the second step after a
 * password or a sign-in link, bound to its browser; "Sign in with a passkey" and its scripts
 * under the CSP. On a host-name public URL (passkeys need one).
 */
const ORIGIN = 'http://localhost:8080';
describe('sign-in pages with a second factor', () => {
  let t: ReturnType<typeof withJson>;
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  before(async () => {
    t = withJson(
      await createTestApp({ clock, env: { GANTRY_PUBLIC_URL: ORIGIN, GANTRY_RATE_LIMIT_MULTIPLIER: '20' } }),
    );
  });
  after(async () => t.close());

  const post = (url: string, cookie: string, data: Record<string, string>) =>
    t.inject({ method: 'POST', url, headers: { ...FORM_HEADERS, cookie }, payload: form(data) });

  /** A user with two-step sign-in on (through the service), and the TOTP key. */
  async function twoStepUser() {
    const user = await makeUser(t.app);
    const { secret } = await t.app.services.identity.factors.setupTotp(user);
    await t.app.services.identity.factors.enableTotp(user, null, totpAt(secret, clock.now()));
    clock.advance(30_000);
    return { user, secret };
  }

  test('after the password on the OAuth sign-in page comes the second step; the right code continues the request', async () => {
    const { user, secret } = await twoStepUser();
    const client = await makeClient(t);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const { res, cookies } = await signIn(t, url, user.email, user.password);
    assert.equal(res.statusCode, 200, 'a page, not yet a redirect');
    assert.equal(cookies.gantry_session, undefined, 'not signed in yet');
    assert.match(res.payload, /<h1>Two-step sign-in<\/h1>/);
    assert.match(res.payload, /autocomplete="one-time-code"/);
    const mfaToken = hiddenInput(res.payload, 'mfa_token')!;
    const csrf = hiddenInput(res.payload, 'csrf')!;
    const cookie = cookieHeader(cookies);

    const wrong = await post('/auth/two-step', cookie, { csrf, mfa_token: mfaToken, code: '000000' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.payload, /role="alert"[^>]*>That code is wrong or was already used/);
    assert.equal(hiddenInput(wrong.payload, 'mfa_token'), mfaToken, 'the same step, still open');
    const empty = await post('/auth/two-step', cookie, { csrf, mfa_token: mfaToken, code: '' });
    assert.equal(empty.statusCode, 400);

    // Another browser holding the token (and a form of its own) cannot complete it.
    const thief = 'gantry_presession=thief-browser-cookie-value-000';
    const thiefCsrf = t.app.kernel.pageForms.csrfFor('thief-browser-cookie-value-000', 'two-step');
    const stolen = await post('/auth/two-step', thief, {
      csrf: thiefCsrf,
      mfa_token: mfaToken,
      code: totpAt(secret, clock.now()),
    });
    assert.equal(stolen.statusCode, 401);
    assert.match(stolen.payload, /This sign-in has expired/);
    // Nor does a form without this browser's CSRF value.
    assert.equal(
      (await post('/auth/two-step', cookie, { csrf: thiefCsrf, mfa_token: mfaToken, code: '123456' })).statusCode,
      403,
    );

    const done = await post('/auth/two-step', cookie, { csrf, mfa_token: mfaToken, code: totpAt(secret, clock.now()) });
    assert.equal(done.statusCode, 303, done.payload);
    assert.ok((done.headers.location as string).startsWith(`${AUTHORIZE}?`));
    const session = cookiesFrom(done.headers['set-cookie'] as string[] | undefined).gantry_session;
    assert.ok(session);
    const consent = await t.inject({
      url: done.headers.location as string,
      headers: { cookie: cookieHeader({ ...cookies, gantry_session: session }) },
    });
    assert.match(consent.payload, /name="decision" value="allow"/);
    // The browser's session has proved the factor.
    const row = await t.app.kernel.db
      .selectFrom('auth_sessions')
      .selectAll()
      .where('user_id', '=', user.id)
      .orderBy(insertionOrder(), 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(row.factor_verified_at, clock.now().toISOString());
    // The step is used up.
    const again = await post('/auth/two-step', cookie, {
      csrf,
      mfa_token: mfaToken,
      code: totpAt(secret, clock.now()),
    });
    assert.equal(again.statusCode, 401);
  });

  test('five wrong codes end the step; a sign-in link asks for the second step as well', async () => {
    const { user, secret } = await twoStepUser();
    const { res, cookies } = await signIn(
      t,
      authorizeQuery((await makeClient(t)).clientId, pkcePair().challenge),
      user.email,
      user.password,
    );
    const cookie = cookieHeader(cookies);
    const step = { csrf: hiddenInput(res.payload, 'csrf')!, mfa_token: hiddenInput(res.payload, 'mfa_token')! };
    for (let i = 0; i < 4; i++)
      assert.equal((await post('/auth/two-step', cookie, { ...step, code: `11111${i}` })).statusCode, 401);
    const fifth = await post('/auth/two-step', cookie, { ...step, code: '111119' });
    assert.match(fifth.payload, /This sign-in has expired/);
    assert.equal(
      (await post('/auth/two-step', cookie, { ...step, code: totpAt(secret, clock.now()) })).statusCode,
      401,
    );

    await t.inject({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email: user.email } });
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', user.email)
      .where('kind', '=', 'magic_link')
      .orderBy(insertionOrder(), 'desc')
      .executeTakeFirstOrThrow();
    const token = decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(mail.body_text)![1]);
    const landing = await t.inject(`/auth/magic?token=${encodeURIComponent(token)}`);
    const linkCookies = cookiesFrom(landing.headers['set-cookie'] as string[] | undefined);
    const used = await post('/auth/magic', cookieHeader(linkCookies), {
      token,
      csrf: hiddenInput(landing.payload, 'csrf')!,
    });
    assert.equal(used.statusCode, 200);
    assert.match(used.payload, /<h1>Two-step sign-in<\/h1>/);
    assert.equal(cookiesFrom(used.headers['set-cookie'] as string[] | undefined).gantry_session, undefined);
    clock.advance(30_000);
    const done = await post('/auth/two-step', cookieHeader(linkCookies), {
      csrf: hiddenInput(used.payload, 'csrf')!,
      mfa_token: hiddenInput(used.payload, 'mfa_token')!,
      code: totpAt(secret, clock.now()),
    });
    assert.equal(done.statusCode, 303);
    assert.equal(done.headers.location, '/account');
  });

  test('the sign-in pages offer a passkey: the scripts are files of this server, allowed by the CSP, cached by hash', async () => {
    const client = await makeClient(t);
    const page = await t.inject(authorizeQuery(client.clientId, pkcePair().challenge));
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'; connect-src 'self';/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(page.payload, /<div data-passkey-offer hidden>/);
    assert.match(page.payload, /Sign in with a passkey/);
    const scripts = [...page.payload.matchAll(/<script src="([^"]+)" defer><\/script>/g)].map((m) => m[1]);
    assert.equal(scripts.length, 2);
    assert.doesNotMatch(page.payload, /<script>|<script [^s]/, 'no inline script');
    for (const src of scripts) {
      const res = await t.inject(src);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.ok(src.endsWith(`.${createHash('sha256').update(res.payload).digest('hex').slice(0, 16)}.js`));
    }
    assert.match((await t.inject(scripts[0])).payload, /SimpleWebAuthnBrowser/);
    // The approval and account pages that show no passkey keep the strict CSP without scripts.
    const forgot = await t.inject('/auth/forgot-password');
    assert.doesNotMatch(String(forgot.headers['content-security-policy']), /script-src/);
  });

  test('"Sign in with a passkey": options and the answer bound to this browser; a bad answer is a page, not a session', async () => {
    const user = await makeUser(t.app);
    const device = new SoftAuthenticator(ORIGIN, 'localhost');
    await t.app.services.identity.passkeys.register(
      user,
      device.register(await t.app.services.identity.passkeys.registrationOptions(user)) as never,
      'Key',
    );
    const page = await t.inject('/account');
    const cookie = cookieHeader(cookiesFrom(page.headers['set-cookie'] as string[] | undefined));
    const csrf = /action="\/auth\/passkey" [^>]*>\n<input type="hidden" name="csrf" value="([^"]+)"/.exec(
      page.payload,
    )![1];
    assert.equal((await post('/auth/passkey/options', cookie, { csrf: 'forged' })).statusCode, 403);
    const optionsRes = await post('/auth/passkey/options', cookie, { csrf });
    assert.equal(optionsRes.statusCode, 200);
    assert.equal(optionsRes.headers['cache-control'], 'no-store');
    const { options } = optionsRes.json();
    assert.equal(options.rpId, 'localhost');

    const bad = await post('/auth/passkey', cookie, { csrf, return_to: '/account', credential: '{"id":"x"}' });
    assert.equal(bad.statusCode, 401);
    assert.match(bad.payload, /The passkey could not be verified/);
    // An open redirect is not a place to go back to.
    const answer = device.authenticate(options);
    const offsite = await post('/auth/passkey', cookie, {
      csrf,
      return_to: '//evil.example/x',
      credential: JSON.stringify(answer),
    });
    assert.equal(offsite.statusCode, 303);
    assert.equal(offsite.headers.location, '/account');
    assert.ok(cookiesFrom(offsite.headers['set-cookie'] as string[] | undefined).gantry_session);
    // The same answer again: its challenge is spent.
    assert.equal(
      (await post('/auth/passkey', cookie, { csrf, return_to: '/account', credential: JSON.stringify(answer) }))
        .statusCode,
      401,
    );
  });
});
