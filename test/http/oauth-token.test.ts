import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
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

const TOKEN = '/api/v1/oauth/token';
let t: TestApp;
let clock: ManualClock;
before(async () => {
  clock = new ManualClock(new Date());
  t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

async function codeFor(client: { clientId: string }, scope = 'email:read profile:read') {
  const user = await makeUser(t.app);
  const { verifier, challenge } = pkcePair();
  const { location } = await authorizeAndAllow(
    t,
    authorizeQuery(client.clientId, challenge, { scope }),
    user.email,
    user.password,
  );
  return { code: location.searchParams.get('code')!, verifier, user };
}

async function token(payload: Record<string, string>, auth?: string) {
  const res = await t.inject({
    method: 'POST',
    url: TOKEN,
    headers: { ...FORM_HEADERS, ...(auth ? { authorization: auth } : {}) },
    payload: form(payload),
  });
  return Object.assign(res, { json: () => JSON.parse(res.payload) });
}

async function confidentialTokens(scope?: string) {
  const client = await makeClient(t);
  const { code, verifier, user } = await codeFor(client, scope);
  const res = await token(
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
    basic(client.clientId, client.clientSecret!),
  );
  assert.equal(res.statusCode, 200, res.payload);
  return {
    client,
    user,
    body: res.json() as {
      access_token: string;
      refresh_token: string;
      scope: string;
      token_type: string;
      expires_in: number;
    },
  };
}

function assertNoStore(res: { headers: Record<string, unknown> }) {
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.pragma, 'no-cache');
}

describe('authorization_code grant', () => {
  test('confidential client exchanges a code: RFC 9068 access token, opaque refresh token, no-store', async () => {
    const client = await makeClient(t);
    const { code, verifier, user } = await codeFor(client);
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.statusCode, 200);
    assertNoStore(res);
    const body = res.json();
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, 'email:read profile:read');
    assert.match(body.refresh_token, /^[A-Za-z0-9_-]{43}$/);
    const header = decodeProtectedHeader(body.access_token);
    assert.equal(header.alg, 'HS256');
    assert.equal(header.typ, 'at+jwt');
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.iss, 'http://127.0.0.1:8080');
    assert.equal(claims.sub, user.id);
    assert.equal(claims.aud, 'http://127.0.0.1:8080/api/v1');
    assert.equal(claims.client_id, client.clientId);
    assert.equal(claims.scope, 'email:read profile:read');
    assert.ok(claims.jti);
    assert.equal(claims.exp! - claims.iat!, 3600);
  });

  test('public client with client_id in the body', async () => {
    const client = await makeClient(t, { type: 'public' });
    assert.equal(client.clientSecret, null);
    const { code, verifier } = await codeFor(client);
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: client.clientId,
    });
    assert.equal(res.statusCode, 200);
    assert.ok(res.json().access_token);
  });

  test('code replay: invalid_grant, and every token issued from the code is revoked', async () => {
    const client = await makeClient(t);
    const { code, verifier } = await codeFor(client);
    const auth = basic(client.clientId, client.clientSecret!);
    const first = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      auth,
    );
    const { access_token: access, refresh_token: refresh } = first.json();
    assert.equal(
      (await t.inject({ url: '/api/v1/oauth/userinfo', headers: { authorization: `Bearer ${access}` } })).statusCode,
      200,
    );
    const replay = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      auth,
    );
    assert.equal(replay.statusCode, 400);
    assert.equal(replay.json().error, 'invalid_grant');
    assertNoStore(replay);
    assert.equal(
      (await t.inject({ url: '/api/v1/oauth/userinfo', headers: { authorization: `Bearer ${access}` } })).statusCode,
      401,
    );
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refresh }, auth);
    assert.equal(refreshed.json().error, 'invalid_grant');
    assert.ok(
      t.logs.some((l) => l.includes('replayed')),
      'replay is logged',
    );
    assert.ok(!t.logs.some((l) => l.includes(code)), 'the code is never logged');
  });

  test('redirect_uri mismatch at the token endpoint -> invalid_grant', async () => {
    const client = await makeClient(t, { redirectUris: [REDIRECT, 'https://app.example/other'] });
    const { code, verifier } = await codeFor(client);
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/other', code_verifier: verifier },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
  });

  test('wrong code_verifier -> invalid_grant', async () => {
    const client = await makeClient(t);
    const { code } = await codeFor(client);
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: pkcePair().verifier },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.json().error, 'invalid_grant');
  });

  for (const [name, verifier] of [
    ['too short (42)', 'a'.repeat(42)],
    ['too long (129)', 'a'.repeat(129)],
    ['bad characters', `${'a'.repeat(42)}+/`],
    ['spaces', `${'a'.repeat(42)} b`],
  ] as const) {
    test(`code_verifier ${name} -> invalid_request`, async () => {
      const client = await makeClient(t);
      const { code } = await codeFor(client);
      const res = await token(
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
        basic(client.clientId, client.clientSecret!),
      );
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_request');
    });
  }

  test('verifier of exactly 43 and 128 characters are accepted shapes (plain challenge equal to verifier refused)', async () => {
    // A "plain" challenge is the verifier itself: S256 of it never matches, so the code cannot be redeemed.
    const client = await makeClient(t);
    const user = await makeUser(t.app);
    const verifier = 'v'.repeat(43);
    const { location } = await authorizeAndAllow(
      t,
      authorizeQuery(client.clientId, verifier),
      user.email,
      user.password,
    );
    const res = await token(
      {
        grant_type: 'authorization_code',
        code: location.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.json().error, 'invalid_grant');
  });

  test('missing code_verifier -> invalid_request', async () => {
    const client = await makeClient(t);
    const { code } = await codeFor(client);
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.json().error, 'invalid_request');
  });

  test("client A's code used by client B -> invalid_grant, and the code is consumed", async () => {
    const a = await makeClient(t);
    const b = await makeClient(t);
    const { code, verifier } = await codeFor(a);
    const stolen = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(b.clientId, b.clientSecret!),
    );
    assert.equal(stolen.json().error, 'invalid_grant');
    const legit = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(a.clientId, a.clientSecret!),
    );
    assert.equal(legit.json().error, 'invalid_grant');
  });

  test('expired code (60 s) -> invalid_grant', async () => {
    const client = await makeClient(t);
    const { code, verifier } = await codeFor(client);
    clock.advance(61_000);
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /expired/);
  });

  test('a code still works at 59 s', async () => {
    const client = await makeClient(t);
    const { code, verifier } = await codeFor(client);
    clock.advance(59_000);
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.statusCode, 200);
  });

  test('unknown code -> invalid_grant', async () => {
    const client = await makeClient(t);
    const res = await token(
      { grant_type: 'authorization_code', code: 'made-up', redirect_uri: REDIRECT, code_verifier: pkcePair().verifier },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.json().error, 'invalid_grant');
  });
});

describe('client authentication and the error table', () => {
  test('wrong Basic secret -> 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const client = await makeClient(t);
    const res = await token(
      { grant_type: 'refresh_token', refresh_token: 'x' },
      basic(client.clientId, 'wrong-secret'),
    );
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
    assert.match(String(res.headers['www-authenticate']), /^Basic/);
    assertNoStore(res);
  });

  test('unknown client via Basic -> 401 invalid_client', async () => {
    const res = await token(
      { grant_type: 'refresh_token', refresh_token: 'x' },
      basic('7b0c1f7e-4c4b-4e0f-9a53-2f3b3f1b0c11', 'whatever'),
    );
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
  });

  test('confidential client presenting only client_id -> 401 invalid_client (no WWW-Authenticate: Basic)', async () => {
    const client = await makeClient(t);
    const res = await token({ grant_type: 'refresh_token', refresh_token: 'x', client_id: client.clientId });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
    assert.equal(res.headers['www-authenticate'], undefined);
  });

  test('no client authentication at all -> 401 invalid_client', async () => {
    const res = await token({ grant_type: 'authorization_code', code: 'x' });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
  });

  test('client_secret in the body (client_secret_post) is not accepted', async () => {
    const client = await makeClient(t);
    const res = await token({
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: client.clientId,
      client_secret: client.clientSecret!,
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
  });

  test('Basic credentials are form-urlencoded (RFC 6749 2.3.1): a raw secret with reserved characters is decoded', async () => {
    const client = await makeClient(t);
    // Our secrets are base64url: "-" and "_" are unreserved, so encoding changes nothing; prove decoding of %XX works.
    const encodedId = client.clientId.replace(/-/g, '%2D');
    const auth = `Basic ${Buffer.from(`${encodedId}:${client.clientSecret}`).toString('base64')}`;
    const res = await token({ grant_type: 'refresh_token', refresh_token: 'unknown' }, auth);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
  });

  test('unsupported grant types -> 400 unsupported_grant_type', async () => {
    const client = await makeClient(t);
    for (const grantType of [
      'client_credentials',
      'password',
      'urn:ietf:params:oauth:grant-type:device_code',
      'implicit',
    ]) {
      const res = await token({ grant_type: grantType }, basic(client.clientId, client.clientSecret!));
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'unsupported_grant_type');
      assertNoStore(res);
    }
  });

  test('missing grant_type -> invalid_request; repeated parameter -> invalid_request', async () => {
    const client = await makeClient(t);
    const missing = await token({}, basic(client.clientId, client.clientSecret!));
    assert.equal(missing.json().error, 'invalid_request');
    const repeated = await t.inject({
      method: 'POST',
      url: TOKEN,
      headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
      payload: 'grant_type=refresh_token&refresh_token=a&refresh_token=b',
    });
    assert.equal(JSON.parse(repeated.payload).error, 'invalid_request');
  });

  test('a JSON body is refused with invalid_request (form encoding is required)', async () => {
    const client = await makeClient(t);
    const res = await t.inject({
      method: 'POST',
      url: TOKEN,
      headers: { authorization: basic(client.clientId, client.clientSecret!) },
      payload: { grant_type: 'refresh_token', refresh_token: 'x' },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(JSON.parse(res.payload).error, 'invalid_request');
  });

  test('rotate-secret: the old secret stops working at once', async () => {
    const client = await makeClient(t);
    const rotated = await t.app.services.oauth.clients.rotateSecret(client.clientId);
    const old = await token(
      { grant_type: 'refresh_token', refresh_token: 'x' },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(old.statusCode, 401);
    const fresh = await token(
      { grant_type: 'refresh_token', refresh_token: 'x' },
      basic(client.clientId, rotated.clientSecret),
    );
    assert.equal(fresh.json().error, 'invalid_grant');
  });
});

describe('refresh_token grant', () => {
  test('30 refreshes of different authorizations at once all answer, none waits forever', async () => {
    // More than the PostgreSQL pool's connections: each refresh transaction also charges the
    // token endpoint's limit, which must not wait for a second connection of the same pool.
    const families = [];
    for (let i = 0; i < 30; i++) families.push(await confidentialTokens());
    let timer: NodeJS.Timeout | undefined;
    const answers = await Promise.race([
      Promise.all(
        families.map(({ client, body }) =>
          token(
            { grant_type: 'refresh_token', refresh_token: body.refresh_token },
            basic(client.clientId, client.clientSecret!),
          ),
        ),
      ),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('30 concurrent refreshes did not all answer within 20 s')), 20_000);
      }),
    ]).finally(() => clearTimeout(timer));
    assert.deepEqual(
      answers.map((res) => res.statusCode),
      families.map(() => 200),
    );
    assert.ok(answers.every((res) => /^[A-Za-z0-9_-]{43}$/.test(res.json().refresh_token)));
  });

  test('rotation: a new refresh token every time; the old one is consumed', async () => {
    const { client, body } = await confidentialTokens();
    const auth = basic(client.clientId, client.clientSecret!);
    const res = await token({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, auth);
    assert.equal(res.statusCode, 200);
    assertNoStore(res);
    const next = res.json();
    assert.notEqual(next.refresh_token, body.refresh_token);
    assert.notEqual(next.access_token, body.access_token);
    assert.equal(next.scope, 'email:read profile:read');
  });

  test('reuse of a consumed refresh token revokes the whole family, access tokens at once', async () => {
    const samples = async () => {
      const read = async (name: string) =>
        (await t.app.kernel.metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
      const grants = await read('gantry_oauth_token_grants_total');
      const grant = (type: string) => grants.find((v) => v.labels.grant_type === type)?.value ?? 0;
      const reuse = (await read('gantry_oauth_refresh_reuse_total'))[0]?.value ?? 0;
      return { code: grant('authorization_code'), refresh: grant('refresh_token'), reuse };
    };
    const before = await samples();
    const { client, body } = await confidentialTokens();
    const auth = basic(client.clientId, client.clientSecret!);
    const second = (await token({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, auth)).json();
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, auth);
    assert.equal(reuse.statusCode, 400);
    assert.equal(reuse.json().error, 'invalid_grant');
    const afterReuse = await token({ grant_type: 'refresh_token', refresh_token: second.refresh_token }, auth);
    assert.equal(afterReuse.json().error, 'invalid_grant', 'the newest token of the family is dead too');
    for (const access of [body.access_token, second.access_token]) {
      const res = await t.inject({ url: '/api/v1/oauth/userinfo', headers: { authorization: `Bearer ${access}` } });
      assert.equal(res.statusCode, 401);
    }
    assert.ok(t.logs.some((l) => l.includes('reuse detected')));
    assert.ok(!t.logs.some((l) => l.includes(body.refresh_token)), 'refresh tokens are never logged');
    // One code exchange, one good refresh; the reuse and the refused one after it issue nothing.
    const now = await samples();
    assert.deepEqual(
      { code: now.code - before.code, refresh: now.refresh - before.refresh, reuse: now.reuse - before.reuse },
      { code: 1, refresh: 1, reuse: 1 },
    );
  });

  test("client A's refresh token used by client B -> invalid_grant, family untouched", async () => {
    const { client, body } = await confidentialTokens();
    const b = await makeClient(t);
    const stolen = await token(
      { grant_type: 'refresh_token', refresh_token: body.refresh_token },
      basic(b.clientId, b.clientSecret!),
    );
    assert.equal(stolen.json().error, 'invalid_grant');
    const legit = await token(
      { grant_type: 'refresh_token', refresh_token: body.refresh_token },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(legit.statusCode, 200);
  });

  test('narrower scope is allowed; the refresh token keeps the original grant', async () => {
    const { client, body } = await confidentialTokens();
    const auth = basic(client.clientId, client.clientSecret!);
    const narrow = (
      await token({ grant_type: 'refresh_token', refresh_token: body.refresh_token, scope: 'email:read' }, auth)
    ).json();
    assert.equal(narrow.scope, 'email:read');
    assert.equal(decodeJwt(narrow.access_token).scope, 'email:read');
    const back = (await token({ grant_type: 'refresh_token', refresh_token: narrow.refresh_token }, auth)).json();
    assert.equal(back.scope, 'email:read profile:read');
  });

  test('scope escalation on refresh -> invalid_scope, and the refresh token still works', async () => {
    const { client, body } = await confidentialTokens('email:read');
    const auth = basic(client.clientId, client.clientSecret!);
    const wider = await token(
      { grant_type: 'refresh_token', refresh_token: body.refresh_token, scope: 'email:read wallet:read' },
      auth,
    );
    assert.equal(wider.statusCode, 400);
    assert.equal(wider.json().error, 'invalid_scope');
    const ok = await token({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, auth);
    assert.equal(ok.statusCode, 200);
  });

  test('N simultaneous uses of one refresh token: exactly one success, family ends revoked', async () => {
    const { client, body } = await confidentialTokens();
    const auth = basic(client.clientId, client.clientSecret!);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => token({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, auth)),
    );
    const ok = results.filter((r) => r.statusCode === 200);
    assert.equal(ok.length, 1);
    assert.ok(results.filter((r) => r.statusCode !== 200).every((r) => r.json().error === 'invalid_grant'));
    const winner = ok[0].json();
    const next = await token({ grant_type: 'refresh_token', refresh_token: winner.refresh_token }, auth);
    assert.equal(next.json().error, 'invalid_grant', 'the family ends revoked');
    const grant = await t.app.kernel.db
      .selectFrom('oauth_grants')
      .selectAll()
      .where('client_id', '=', client.clientId)
      .executeTakeFirstOrThrow();
    assert.equal(grant.revoke_reason, 'refresh_token_reuse');
  });

  test('refresh tokens are stored as SHA-256, not in the clear', async () => {
    const { body } = await confidentialTokens();
    const raw = await t.app.kernel.db
      .selectFrom('oauth_refresh_tokens')
      .select('token_hash')
      .where('token_hash', '=', body.refresh_token)
      .execute();
    assert.equal(raw.length, 0);
  });

  test('missing refresh_token -> invalid_request', async () => {
    const client = await makeClient(t);
    const res = await token({ grant_type: 'refresh_token' }, basic(client.clientId, client.clientSecret!));
    assert.equal(res.json().error, 'invalid_request');
  });
});

describe('refresh while another transaction holds the connection', () => {
  test('the refresh waits and takes the ordinary path, with the same rules', async () => {
    const { client, body } = await confidentialTokens();
    const auth = basic(client.clientId, client.clientSecret!);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const blocker = t.app.kernel.db.transaction().execute(async (trx) => {
      await trx.selectFrom('oauth_clients').select('id').limit(1).execute();
      entered();
      await held;
    });
    await inside;
    const first = token({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, auth);
    const second = token({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, auth);
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    release();
    await blocker;
    const results = await Promise.all([first, second]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 400]);
    const winner = results.find((r) => r.statusCode === 200)!.json();
    assert.equal(
      (await token({ grant_type: 'refresh_token', refresh_token: winner.refresh_token }, auth)).json().error,
      'invalid_grant',
      'reuse revoked the family',
    );
  });
});
