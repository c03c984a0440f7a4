import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testEnvFor } from '../helpers/postgres.js';
import { bearer, makeUser, signedInUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createAppContext } from '../../src/app.js';
import { resolveConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { TEST_ENV } from '../helpers/app.js';
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

let t: TestApp;
let clock: ManualClock;
before(async () => {
  clock = new ManualClock(new Date());
  t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

async function post(url: string, payload: Record<string, string>, auth?: string) {
  const res = await t.inject({
    method: 'POST',
    url,
    headers: { ...FORM_HEADERS, ...(auth ? { authorization: auth } : {}) },
    payload: form(payload),
  });
  return Object.assign(res, { json: () => JSON.parse(res.payload || 'null') });
}

async function issue(
  scope = 'email:read profile:read',
  clientOverrides: Parameters<typeof makeClient>[1] = {},
  userOverrides: Parameters<typeof makeUser>[1] = {},
) {
  const client = await makeClient(t, clientOverrides);
  const user = await makeUser(t.app, userOverrides);
  const { verifier, challenge } = pkcePair();
  const { location, cookies } = await authorizeAndAllow(
    t,
    authorizeQuery(client.clientId, challenge, { scope }),
    user.email,
    user.password,
  );
  const auth = client.clientSecret ? basic(client.clientId, client.clientSecret) : undefined;
  const res = await post(
    '/api/v1/oauth/token',
    {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      ...(auth ? {} : { client_id: client.clientId }),
    },
    auth,
  );
  assert.equal(res.statusCode, 200, res.payload);
  return { client, user, auth, cookies, tokens: res.json() as { access_token: string; refresh_token: string } };
}

const userinfo = (token: string) =>
  t.inject({ url: '/api/v1/oauth/userinfo', headers: { authorization: `Bearer ${token}` } });

describe('GET /oauth/userinfo', () => {
  test('claims follow the scopes exactly', async () => {
    const both = await issue('email:read profile:read', {}, { fullName: 'Ada Lovelace', username: `ada${Date.now()}` });
    const res = await userinfo(both.tokens.access_token);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(JSON.parse(res.payload), {
      sub: both.user.id,
      email: both.user.email,
      email_verified: true,
      name: 'Ada Lovelace',
      preferred_username: both.user.username,
    });
    const emailOnly = await issue('email:read', {}, { verified: false });
    assert.deepEqual(JSON.parse((await userinfo(emailOnly.tokens.access_token)).payload), {
      sub: emailOnly.user.id,
      email: emailOnly.user.email,
      email_verified: false,
    });
    const profileOnly = await issue('profile:read');
    assert.deepEqual(Object.keys(JSON.parse((await userinfo(profileOnly.tokens.access_token)).payload)).sort(), [
      'name',
      'preferred_username',
      'sub',
    ]);
    const walletOnly = await issue('wallet:read');
    assert.deepEqual(JSON.parse((await userinfo(walletOnly.tokens.access_token)).payload), { sub: walletOnly.user.id });
  });

  test('expired access token -> 401 with WWW-Authenticate: Bearer error="invalid_token"', async () => {
    const { tokens } = await issue();
    clock.advance(3601_000);
    const res = await userinfo(tokens.access_token);
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /^Bearer .*error="invalid_token"/);
  });

  test('forged token and session token are refused (session tokens are not userinfo tokens)', async () => {
    const { tokens } = await issue();
    const [h, p] = tokens.access_token.split('.');
    assert.equal((await userinfo(`${h}.${p}.${'A'.repeat(43)}`)).statusCode, 401);
    const session = await signedInUser(t.app);
    const res = await userinfo(session.token);
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /invalid_token/);
  });

  test('no token -> 401', async () => {
    const res = await t.inject('/api/v1/oauth/userinfo');
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /^Bearer/);
  });
});

describe('scopes on other endpoints', () => {
  test('wallet:read reaches /wallet/me; without it 403 INSUFFICIENT_SCOPE; first-party-only endpoints refuse OAuth tokens', async () => {
    const withWallet = await issue('wallet:read email:read');
    const ok = await t.inject({ url: '/api/v1/wallet/me', headers: bearer(withWallet.tokens.access_token) });
    assert.equal(ok.statusCode, 200);
    assert.ok('balance' in JSON.parse(ok.payload).data);
    const without = await issue('email:read');
    const denied = await t.inject({ url: '/api/v1/wallet/me', headers: bearer(without.tokens.access_token) });
    assert.equal(denied.statusCode, 403);
    assert.equal(JSON.parse(denied.payload).error.code, 'INSUFFICIENT_SCOPE');
    const grants = await t.inject({ url: '/api/v1/oauth/grants', headers: bearer(withWallet.tokens.access_token) });
    assert.equal(grants.statusCode, 403);
    const me = await t.inject({ url: '/api/v1/auth/me', headers: bearer(withWallet.tokens.access_token) });
    assert.equal(me.statusCode, 403);
  });
});

describe('POST /oauth/revoke (RFC 7009)', () => {
  test('refresh token revokes its family: refresh and access tokens stop at once', async () => {
    const { auth, tokens } = await issue();
    const res = await post(
      '/api/v1/oauth/revoke',
      { token: tokens.refresh_token, token_type_hint: 'refresh_token' },
      auth,
    );
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal((await userinfo(tokens.access_token)).statusCode, 401);
    const refreshed = await post(
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      auth,
    );
    assert.equal(refreshed.json().error, 'invalid_grant');
  });

  test('access token stops at once; its refresh token still works', async () => {
    const { auth, tokens } = await issue();
    assert.equal((await userinfo(tokens.access_token)).statusCode, 200);
    const res = await post('/api/v1/oauth/revoke', { token: tokens.access_token }, auth);
    assert.equal(res.statusCode, 200);
    assert.equal((await userinfo(tokens.access_token)).statusCode, 401);
    const refreshed = await post(
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      auth,
    );
    assert.equal(refreshed.statusCode, 200);
  });

  test("another client's token is left untouched, yet the answer is 200", async () => {
    const a = await issue();
    const b = await makeClient(t);
    const res = await post(
      '/api/v1/oauth/revoke',
      { token: a.tokens.refresh_token },
      basic(b.clientId, b.clientSecret!),
    );
    assert.equal(res.statusCode, 200);
    const res2 = await post(
      '/api/v1/oauth/revoke',
      { token: a.tokens.access_token },
      basic(b.clientId, b.clientSecret!),
    );
    assert.equal(res2.statusCode, 200);
    assert.equal((await userinfo(a.tokens.access_token)).statusCode, 200);
    assert.equal(
      (
        await post(
          '/api/v1/oauth/token',
          { grant_type: 'refresh_token', refresh_token: a.tokens.refresh_token },
          a.auth,
        )
      ).statusCode,
      200,
    );
  });

  test('unknown token -> 200; public client by client_id', async () => {
    const pub = await issue('email:read', { type: 'public' });
    const res = await post('/api/v1/oauth/revoke', { token: 'nothing-like-this', client_id: pub.client.clientId });
    assert.equal(res.statusCode, 200);
    const real = await post('/api/v1/oauth/revoke', {
      token: pub.tokens.refresh_token,
      client_id: pub.client.clientId,
    });
    assert.equal(real.statusCode, 200);
    assert.equal((await userinfo(pub.tokens.access_token)).statusCode, 401);
  });

  test('the client authenticates first: wrong secret -> 401 invalid_client and nothing revoked', async () => {
    const { client, tokens } = await issue();
    const res = await post('/api/v1/oauth/revoke', { token: tokens.refresh_token }, basic(client.clientId, 'wrong'));
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
    assert.match(String(res.headers['www-authenticate']), /^Basic/);
    assert.equal((await userinfo(tokens.access_token)).statusCode, 200);
  });

  test('missing token -> 400 invalid_request', async () => {
    const client = await makeClient(t);
    const res = await post('/api/v1/oauth/revoke', {}, basic(client.clientId, client.clientSecret!));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_request');
  });
});

describe('discovery (RFC 8414)', () => {
  test('both documents identical, with the documented values and headers', async () => {
    const a = await t.inject('/.well-known/openid-configuration');
    const b = await t.inject('/.well-known/oauth-authorization-server');
    assert.equal(a.statusCode, 200);
    assert.equal(a.payload, b.payload);
    for (const res of [a, b]) {
      assert.equal(res.headers['cache-control'], 'public, max-age=3600');
      assert.equal(res.headers['access-control-allow-origin'], '*');
    }
    const doc = JSON.parse(a.payload);
    assert.equal(doc.issuer, 'http://127.0.0.1:8080');
    assert.equal(doc.authorization_endpoint, 'http://127.0.0.1:8080/api/v1/oauth/authorize');
    assert.equal(doc.token_endpoint, 'http://127.0.0.1:8080/api/v1/oauth/token');
    assert.equal(doc.userinfo_endpoint, 'http://127.0.0.1:8080/api/v1/oauth/userinfo');
    assert.equal(doc.revocation_endpoint, 'http://127.0.0.1:8080/api/v1/oauth/revoke');
    assert.deepEqual(doc.response_types_supported, ['code']);
    assert.deepEqual(doc.grant_types_supported, [
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
    ]);
    assert.deepEqual(doc.authorization_grant_profiles_supported, ['urn:ietf:params:oauth:grant-profile:id-jag']);
    assert.deepEqual(doc.token_endpoint_auth_methods_supported, ['client_secret_basic', 'none']);
    assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(doc.scopes_supported, [
      'email:read',
      'profile:read',
      'execution:run',
      'wallet:read',
      'tools:call',
    ]);
    assert.deepEqual(doc.subject_types_supported, ['public']);
    assert.deepEqual(doc.claims_supported, ['sub', 'email', 'email_verified', 'name', 'preferred_username']);
    assert.equal(doc.authorization_response_iss_parameter_supported, true);
    assert.equal(doc.jwks_uri, undefined);
    assert.equal(doc.id_token_signing_alg_values_supported, undefined);
  });
});

describe('GET/DELETE /oauth/grants', () => {
  test('lists the apps a user granted and revokes one with all its tokens', async () => {
    const { client, user, tokens, auth } = await issue('email:read wallet:read', { name: 'Grant Lister' });
    const session = await t.app.services.identity.sessions.start(user.id);
    const list = await t.inject({ url: '/api/v1/oauth/grants', headers: bearer(session.accessToken) });
    assert.equal(list.statusCode, 200);
    const data = JSON.parse(list.payload).data;
    assert.equal(data.length, 1);
    assert.equal(data[0].clientId, client.clientId);
    assert.equal(data[0].clientName, 'Grant Lister');
    assert.deepEqual(data[0].scopes, ['email:read', 'wallet:read']);
    const del = await t.inject({
      method: 'DELETE',
      url: `/api/v1/oauth/grants/${client.clientId}`,
      headers: bearer(session.accessToken),
    });
    assert.equal(del.statusCode, 200);
    assert.equal(JSON.parse(del.payload).data.revoked, true);
    assert.equal((await userinfo(tokens.access_token)).statusCode, 401);
    assert.equal(
      (
        await post('/api/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, auth)
      ).json().error,
      'invalid_grant',
    );
    assert.deepEqual(
      JSON.parse((await t.inject({ url: '/api/v1/oauth/grants', headers: bearer(session.accessToken) })).payload).data,
      [],
    );
    const again = await t.inject({
      method: 'DELETE',
      url: `/api/v1/oauth/grants/${client.clientId}`,
      headers: bearer(session.accessToken),
    });
    assert.equal(again.statusCode, 404);
  });

  test("another user's grant cannot be revoked through mine; malformed id is 422", async () => {
    const a = await issue();
    const other = await signedInUser(t.app);
    const res = await t.inject({
      method: 'DELETE',
      url: `/api/v1/oauth/grants/${a.client.clientId}`,
      headers: other.headers,
    });
    assert.equal(res.statusCode, 404);
    assert.equal((await userinfo(a.tokens.access_token)).statusCode, 200);
    const bad = await t.inject({ method: 'DELETE', url: '/api/v1/oauth/grants/not-a-uuid', headers: other.headers });
    assert.equal(bad.statusCode, 422);
  });
});

describe('client delete reaches a running server through the change feed', () => {
  test('deleting a client in another process stops its tokens within a poll', async () => {
    const { client, tokens } = await issue();
    assert.equal((await userinfo(tokens.access_token)).statusCode, 200);
    await t.app.kernel.changes.start(50);
    const env = await testEnvFor(t.dataDir, TEST_ENV);
    const other = await createAppContext(resolveConfig({ dataDir: t.dataDir }, env), {
      logger: createLogger('silent'),
      env,
    });
    try {
      await other.services.oauth.clients.remove(client.clientId);
    } finally {
      await other.kernel.close();
    }
    await t.app.kernel.changes.poll();
    assert.equal((await userinfo(tokens.access_token)).statusCode, 401);
    await t.app.kernel.changes.stop();
  });
});
