import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import {
  AUTHORIZE,
  REDIRECT,
  authorizeAndAllow,
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

let t: TestApp;
before(async () => {
  t = await createTestApp({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

/**
 * Opens a sign-in link as a browser does: the page, then its Continue button (a form POST that
 * carries the page's csrf value and the browser's cookies, those given as `cookies` included).
 */
async function openMagicLink(link: string, cookies: Record<string, string> = {}) {
  const jar = { ...cookies };
  const pageRes = await t.inject({ url: link, headers: { cookie: cookieHeader(jar) } });
  Object.assign(jar, cookiesFrom(pageRes.headers['set-cookie'] as string[] | string | undefined));
  const token = hiddenInput(pageRes.payload, 'token') ?? new URL(link, 'http://x').searchParams.get('token') ?? '';
  return t.inject({
    method: 'POST',
    url: '/auth/magic',
    headers: { ...FORM_HEADERS, cookie: cookieHeader(jar) },
    payload: form({ token, csrf: hiddenInput(pageRes.payload, 'csrf') ?? '' }),
  });
}

describe('GET /oauth/authorize: requests that must not redirect (RFC 6749 4.1.2.1)', () => {
  test('unknown client_id gives an HTML error page 400, never a redirect', async () => {
    const res = await t.inject(authorizeQuery('7b0c1f7e-4c4b-4e0f-9a53-2f3b3f1b0c11', pkcePair().challenge));
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.payload, /not registered/);
  });

  test('unregistered redirect_uri gives an error page (open redirect refused)', async () => {
    const client = await makeClient(t);
    for (const uri of [
      'https://evil.example/cb',
      `${REDIRECT}/extra`,
      `${REDIRECT}?x=1`,
      'https://app.example/CB',
      'https://app.example/cb#frag',
    ]) {
      const res = await t.inject(authorizeQuery(client.clientId, pkcePair().challenge, { redirect_uri: uri }));
      assert.equal(res.statusCode, 400, uri);
      assert.equal(res.headers.location, undefined, uri);
    }
  });

  test('N-L5: a redirect that launches a browser gets the page, even for a client registered before it was refused', async () => {
    const launcher = 'microsoft-edge:https://evil.example/cb';
    const client = await t.app.services.oauth.clients.saveSelfRegistered({
      id: randomUUID(),
      name: 'Older Agent',
      redirectUris: [launcher, REDIRECT],
      scopes: ['email:read', 'profile:read'],
      registration: 'dynamic',
      metadataExpiresAt: null,
    });
    // response_type=token would be answered by redirect (the deny of the review went there too).
    const res = await t.inject(
      authorizeQuery(client.id, pkcePair().challenge, { redirect_uri: launcher, response_type: 'token' }),
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
    assert.match(res.payload, /redirect_uri is not registered/);
    assert.equal((await t.inject(authorizeQuery(client.id, pkcePair().challenge))).statusCode, 200, 'its https one');
  });

  test('missing redirect_uri gives an error page', async () => {
    const client = await makeClient(t);
    const res = await t.inject(authorizeQuery(client.clientId, pkcePair().challenge, { redirect_uri: undefined }));
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
  });

  test('a repeated client_id is refused with a page', async () => {
    const client = await makeClient(t);
    const res = await t.inject(`${authorizeQuery(client.clientId, pkcePair().challenge)}&client_id=${client.clientId}`);
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
  });
});

describe('GET /oauth/authorize: errors by redirect with state and iss', () => {
  const cases: Array<[string, Record<string, string | undefined>, string]> = [
    ['missing code_challenge', { code_challenge: undefined }, 'invalid_request'],
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['missing code_challenge_method', { code_challenge_method: undefined }, 'invalid_request'],
    ['malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['response_type token (implicit)', { response_type: 'token' }, 'unsupported_response_type'],
    ['missing response_type', { response_type: undefined }, 'invalid_request'],
    ['unknown scope', { scope: 'email:read admin' }, 'invalid_scope'],
    ['missing scope', { scope: undefined }, 'invalid_request'],
  ];
  for (const [name, extra, error] of cases) {
    test(`${name} -> ${error}`, async () => {
      const client = await makeClient(t);
      const res = await t.inject(authorizeQuery(client.clientId, pkcePair().challenge, extra));
      assert.equal(res.statusCode, 302);
      const location = new URL(res.headers.location as string);
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
      assert.equal(location.searchParams.get('error'), error);
      assert.equal(location.searchParams.get('state'), 'st-123');
      assert.equal(location.searchParams.get('iss'), 'http://127.0.0.1:8080');
      assert.equal(location.searchParams.get('code'), null);
    });
  }

  test('a scope the client is not allowed -> invalid_scope, never silently dropped', async () => {
    const client = await makeClient(t, { scopes: ['email:read'] });
    const res = await t.inject(
      authorizeQuery(client.clientId, pkcePair().challenge, { scope: 'email:read wallet:read' }),
    );
    assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'invalid_scope');
  });
});

describe('sign-in and consent pages', () => {
  test('sign-in page: form with email, password, hidden csrf and request state; framing and caching forbidden', async () => {
    const client = await makeClient(t, { name: 'Acme <Tools>' });
    const res = await t.inject(authorizeQuery(client.clientId, pkcePair().challenge));
    assert.equal(res.statusCode, 200);
    assert.match(res.payload, /<form method="post"/);
    assert.match(res.payload, /name="email"/);
    assert.match(res.payload, /name="password"/);
    assert.ok(hiddenInput(res.payload, 'csrf'));
    assert.ok(hiddenInput(res.payload, 'request_state'));
    assert.match(res.payload, /Acme &lt;Tools&gt;/, 'client name is escaped');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(String(res.headers['set-cookie']), /HttpOnly/);
    assert.match(String(res.headers['set-cookie']), /SameSite=Lax/);
  });

  test('wrong password re-renders the sign-in page with 401 and no session', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const { res } = await signIn(
      t,
      authorizeQuery(client.clientId, pkcePair().challenge),
      user.email,
      'wrong password!',
    );
    assert.equal(res.statusCode, 401);
    assert.match(res.payload, /Wrong email or password/);
    assert.doesNotMatch(String(res.headers['set-cookie'] ?? ''), /gantry_session/);
  });

  test("ending the user's sessions (password reset, member removal) signs the browser out of the pages too", async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const { cookies } = await signIn(t, url, user.email, user.password);
    const consent = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
    assert.match(consent.payload, /name="decision" value="allow"/);
    // What POST /auth/reset-password does to every session of the user.
    await t.app.services.identity.sessions.revokeAllOfUser(t.app.kernel.db, user.id, 'password_reset');
    const after = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
    assert.doesNotMatch(after.payload, /name="decision"/);
    assert.match(after.payload, /name="password"/);
  });

  test('sign-in POST without the CSRF value is refused (403)', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const page = await t.inject(authorizeQuery(client.clientId, pkcePair().challenge));
    const cookies = cookiesFrom(page.headers['set-cookie'] as string);
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        request_state: hiddenInput(page.payload, 'request_state')!,
        email: user.email,
        password: user.password,
      }),
    });
    assert.equal(res.statusCode, 403);
    assert.doesNotMatch(String(res.headers['set-cookie'] ?? ''), /gantry_session/);
  });

  test('a tampered request state is refused', async () => {
    const client = await makeClient(t);
    const page = await t.inject(authorizeQuery(client.clientId, pkcePair().challenge));
    const state = hiddenInput(page.payload, 'request_state')!;
    const cookies = cookiesFrom(page.headers['set-cookie'] as string);
    const forged =
      Buffer.from(
        JSON.stringify({
          clientId: client.clientId,
          redirectUri: 'https://evil.example/cb',
          scopes: ['email:read'],
          state: null,
          codeChallenge: 'x'.repeat(43),
          iat: 9e9,
        }),
      ).toString('base64url') +
      '.' +
      state.split('.')[1];
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({ csrf: hiddenInput(page.payload, 'csrf')!, request_state: forged, decision: 'allow' }),
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
  });

  test('consent page lists each scope in plain words with allow and deny buttons', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const url = authorizeQuery(client.clientId, pkcePair().challenge, { scope: 'email:read wallet:read' });
    const { res, cookies } = await signIn(t, url, user.email, user.password);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, url);
    const session = res.headers['set-cookie'] as string;
    assert.match(session, /gantry_session=.*HttpOnly.*SameSite=Lax/);
    assert.doesNotMatch(session, /Secure/, 'not Secure on an http public URL');
    const consent = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
    assert.equal(consent.statusCode, 200);
    assert.match(consent.payload, /See your email address/);
    assert.match(consent.payload, /See your wallet balance/);
    assert.doesNotMatch(consent.payload, /See your name/);
    assert.match(consent.payload, /name="decision" value="allow"/);
    assert.match(consent.payload, /name="decision" value="deny"/);
    assert.equal(consent.headers['x-frame-options'], 'DENY');
    assert.match(String(consent.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(consent.headers['cache-control'], 'no-store');
  });

  test("N-L5: a self-registered client is marked unverified wherever the pages name it; the operator's is not", async () => {
    // A name registered before such names were refused (the review's): the mark is what warns.
    const stored = await t.app.services.oauth.clients.saveSelfRegistered({
      id: randomUUID(),
      name: 'Gantry Admin Console',
      redirectUris: [REDIRECT],
      scopes: ['email:read', 'profile:read'],
      registration: 'dynamic',
      metadataExpiresAt: null,
    });
    const notice =
      /<strong>unverified<\/strong> application: it registered itself and Gantry has not checked its name\./;
    const url = authorizeQuery(stored.id, pkcePair().challenge);
    const first = await t.inject(url);
    assert.match(first.payload, /<h1>Sign in to continue to Gantry Admin Console \(unverified\)<\/h1>/);
    assert.match(first.payload, notice);
    const user = await makeUser(t.app);
    const wrong = await signIn(t, url, user.email, 'not-the-password');
    assert.equal(wrong.res.statusCode, 401);
    assert.match(wrong.res.payload, /<h1>Sign in to continue to Gantry Admin Console \(unverified\)<\/h1>/);
    const { cookies } = await signIn(t, url, user.email, user.password);
    const consent = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
    assert.match(consent.payload, /<h1>Gantry Admin Console \(unverified\) wants to access your Gantry account<\/h1>/);
    assert.match(consent.payload, /If you allow it, Gantry Admin Console \(unverified\) will be able to:/);
    assert.match(consent.payload, notice);

    const partner = await makeClient(t, { name: 'Partner App' });
    const plain = await t.inject(authorizeQuery(partner.clientId, pkcePair().challenge));
    assert.match(plain.payload, /<h1>Sign in to continue to Partner App<\/h1>/);
    assert.doesNotMatch(plain.payload, /unverified/);
  });

  test('the session cookie is stored hashed server-side', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const { cookies } = await signIn(
      t,
      authorizeQuery(client.clientId, pkcePair().challenge),
      user.email,
      user.password,
    );
    const rows = await t.app.kernel.db
      .selectFrom('oauth_browser_sessions')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0].id_hash, cookies.gantry_session);
    assert.equal(rows[0].id_hash.length, 64);
  });

  test('consent POST with a missing or wrong CSRF value is refused and issues no code', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const { cookies } = await signIn(t, url, user.email, user.password);
    const consent = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
    const requestState = hiddenInput(consent.payload, 'request_state')!;
    for (const csrf of [undefined, 'wrong', hiddenInput((await t.inject(url)).payload, 'csrf')!]) {
      const res = await t.inject({
        method: 'POST',
        url: AUTHORIZE,
        headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
        payload: form({ request_state: requestState, decision: 'allow', ...(csrf ? { csrf } : {}) }),
      });
      assert.equal(res.statusCode, 403);
      assert.equal(res.headers.location, undefined);
    }
    const codes = await t.app.kernel.db
      .selectFrom('oauth_codes')
      .select('code_hash')
      .where('user_id', '=', user.id)
      .execute();
    assert.equal(codes.length, 0);
  });

  test('consent POST without a session (CSRF from another browser) asks to sign in', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const { cookies } = await signIn(t, url, user.email, user.password);
    const consent = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: FORM_HEADERS,
      payload: form({
        csrf: hiddenInput(consent.payload, 'csrf')!,
        request_state: hiddenInput(consent.payload, 'request_state')!,
        decision: 'allow',
      }),
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers.location, undefined);
  });

  test('allow redirects with code, state and iss (RFC 9207); the code is stored hashed', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const { location } = await authorizeAndAllow(
      t,
      authorizeQuery(client.clientId, pkcePair().challenge),
      user.email,
      user.password,
    );
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    const code = location.searchParams.get('code')!;
    assert.ok(code.length >= 43);
    assert.equal(location.searchParams.get('state'), 'st-123');
    assert.equal(location.searchParams.get('iss'), 'http://127.0.0.1:8080');
    const rows = await t.app.kernel.db.selectFrom('oauth_codes').selectAll().where('user_id', '=', user.id).execute();
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0].code_hash, code);
  });

  test('deny redirects with error=access_denied, state and iss, and no code', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const { cookies } = await signIn(t, url, user.email, user.password);
    const consent = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        csrf: hiddenInput(consent.payload, 'csrf')!,
        request_state: hiddenInput(consent.payload, 'request_state')!,
        decision: 'deny',
      }),
    });
    const location = new URL(res.headers.location as string);
    assert.equal(location.searchParams.get('error'), 'access_denied');
    assert.equal(location.searchParams.get('state'), 'st-123');
    assert.equal(location.searchParams.get('iss'), 'http://127.0.0.1:8080');
    assert.equal(location.searchParams.get('code'), null);
  });

  test('a user who already granted these scopes skips consent; a wider request asks again', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const { cookies } = await authorizeAndAllow(
      t,
      authorizeQuery(client.clientId, pkcePair().challenge),
      user.email,
      user.password,
    );
    const again = await t.inject({
      method: 'GET',
      url: authorizeQuery(client.clientId, pkcePair().challenge, { scope: 'email:read', state: 's2' }),
      headers: { cookie: cookieHeader(cookies) },
    });
    assert.equal(again.statusCode, 302);
    const location = new URL(again.headers.location as string);
    assert.ok(location.searchParams.get('code'));
    assert.equal(location.searchParams.get('state'), 's2');
    const wider = await t.inject({
      method: 'GET',
      url: authorizeQuery(client.clientId, pkcePair().challenge, { scope: 'email:read wallet:read' }),
      headers: { cookie: cookieHeader(cookies) },
    });
    assert.equal(wider.statusCode, 200);
    assert.match(wider.payload, /name="decision" value="allow"/);
  });

  test('magic link: sends a mail that returns to the same authorize request through /auth/magic', async () => {
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const url = authorizeQuery(client.clientId, pkcePair().challenge, { state: 'magic-state' });
    const page = await t.inject(url);
    const cookies = cookiesFrom(page.headers['set-cookie'] as string);
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        csrf: hiddenInput(page.payload, 'csrf')!,
        request_state: hiddenInput(page.payload, 'request_state')!,
        email: user.email,
        action: 'magic_link',
      }),
    });
    assert.equal(res.statusCode, 200);
    assert.match(res.payload, /sign-in link is on its way/);
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', user.email)
      .executeTakeFirstOrThrow();
    const link = /http:\/\/127\.0\.0\.1:8080(\/auth\/magic\?token=[^\s]+)/.exec(mail.body_text)![1];
    // Opening the link spends nothing (scanners prefetch); its button posts the token.
    const opened = await t.inject(link);
    assert.equal(opened.statusCode, 200);
    assert.equal((await t.inject(link)).statusCode, 200, 'a second GET still shows the page');
    const landed = await openMagicLink(link, cookies);
    assert.equal(landed.statusCode, 303);
    assert.equal(landed.headers.location, url);
    Object.assign(cookies, cookiesFrom(landed.headers['set-cookie'] as string));
    const consent = await t.inject({ method: 'GET', url, headers: { cookie: cookieHeader(cookies) } });
    assert.match(consent.payload, /name="decision" value="allow"/);
    const reused = await openMagicLink(link);
    assert.equal(reused.statusCode, 400, 'a magic link works once');
  });

  test('/auth/magic with a bad token shows an error page', async () => {
    const res = await openMagicLink('/auth/magic?token=nope');
    assert.equal(res.statusCode, 400);
    assert.match(res.payload, /invalid, already used or expired/);
  });
});

describe('open redirects and https deployments', () => {
  test('/auth/magic never continues to anything but our own authorize endpoint', async () => {
    for (const returnTo of [
      'https://evil.example/steal',
      '//evil.example/x',
      '/api/v1/oauth/authorizeX',
      '/\\evil.example',
    ]) {
      const user = await makeUser(t.app);
      await t.app.services.identity.magicLinks.request(user.email, { returnTo });
      const mail = await t.app.kernel.db
        .selectFrom('mail_outbox')
        .selectAll()
        .where('to_address', '=', user.email)
        .executeTakeFirstOrThrow();
      const res = await openMagicLink(/(\/auth\/magic\?token=[^\s]+)/.exec(mail.body_text)![1]);
      assert.equal(res.statusCode, 200, returnTo);
      assert.equal(res.headers.location, undefined, returnTo);
      assert.match(res.payload, /You are signed in/);
      assert.match(String(res.headers['set-cookie']), /gantry_session=/);
    }
  });
});

describe('https public URL', () => {
  test('the browser session cookie is Secure and iss is the https issuer', async () => {
    const secure = await createTestApp({
      env: { GANTRY_PUBLIC_URL: 'https://gantry.example', GANTRY_RATE_LIMIT_MULTIPLIER: '100' },
    });
    try {
      const client = await makeClient(secure);
      const user = await makeUser(secure.app);
      const { res } = await signIn(
        secure,
        authorizeQuery(client.clientId, pkcePair().challenge),
        user.email,
        user.password,
      );
      assert.match(String(res.headers['set-cookie']), /gantry_session=[^;]+;.*HttpOnly.*SameSite=Lax.*Secure/);
      const { location } = await authorizeAndAllow(
        secure,
        authorizeQuery(client.clientId, pkcePair().challenge),
        user.email,
        user.password,
      );
      assert.equal(location.searchParams.get('iss'), 'https://gantry.example');
      const doc = JSON.parse((await secure.inject('/.well-known/oauth-authorization-server')).payload);
      assert.equal(doc.token_endpoint, 'https://gantry.example/api/v1/oauth/token');
    } finally {
      await secure.close();
    }
  });
});
