import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { collectJobs } from '../../src/app.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { withJson } from '../helpers/json-inject.js';
import {
  authorizeAndAllow,
  authorizeQuery,
  form,
  FORM_HEADERS,
  makeClient,
  pkcePair,
  REDIRECT,
} from '../helpers/oauth.js';

const REGISTER = '/api/v1/oauth/register';
const TOKEN = '/api/v1/oauth/token';
let t: ReturnType<typeof withJson>;
let clock: ManualClock;
before(async () => {
  clock = new ManualClock(new Date());
  t = withJson(await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } }));
});
after(async () => t.close());

const register = (payload: unknown, remoteAddress = '203.0.113.1') =>
  t.inject({ method: 'POST', url: REGISTER, payload: payload as object, remoteAddress });

describe('RFC 7591 registration', () => {
  test('discovery advertises the registration endpoint and metadata documents', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const doc = (await t.inject({ url: path })).json();
      assert.equal(doc.registration_endpoint, 'http://127.0.0.1:8080/api/v1/oauth/register');
      assert.equal(doc.client_id_metadata_document_supported, true);
    }
  });

  test('a public client registers: 201 with the metadata as registered, never a secret', async () => {
    const res = await register({
      client_name: 'My MCP Client',
      redirect_uris: ['http://127.0.0.1:33418/callback', 'https://app.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      logo_uri: 'https://app.example/logo.png',
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.match(body.client_id, /^[0-9a-f-]{36}$/);
    assert.ok(Math.abs(body.client_id_issued_at - Math.floor(clock.now().getTime() / 1000)) <= 1);
    assert.deepEqual(
      { ...body, client_id: undefined, client_id_issued_at: undefined },
      {
        client_id: undefined,
        client_id_issued_at: undefined,
        application_type: 'native',
        client_name: 'My MCP Client',
        redirect_uris: ['http://127.0.0.1:33418/callback', 'https://app.example/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'tools:call',
      },
    );
    const stored = await t.app.services.oauth.clients.show(body.client_id);
    assert.equal(stored.registration, 'dynamic');
    assert.equal(stored.type, 'public');
  });

  test('omitted metadata takes the defaults; the name defaults to the redirect host', async () => {
    const res = await register({ redirect_uris: ['https://tool.example/oauth/cb'] });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.client_name, 'tool.example');
    assert.deepEqual(body.grant_types, ['authorization_code', 'refresh_token']);
    assert.deepEqual(body.response_types, ['code']);
    assert.equal(body.token_endpoint_auth_method, 'none');
    assert.equal(body.application_type, 'web');
  });

  test('a client is registered with exactly the scopes it asked for; none asked: the MCP scope', async () => {
    const cases: Array<[unknown, string]> = [
      ['tools:call', 'tools:call'],
      ['wallet:read email:read', 'email:read wallet:read'],
      ['', 'tools:call'],
      [undefined, 'tools:call'],
    ];
    for (const [scope, registered] of cases) {
      const res = await register({ redirect_uris: ['https://app.example/cb'], scope });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().scope, registered, String(scope));
      const stored = await t.app.services.oauth.clients.show(res.json().client_id);
      assert.deepEqual(stored.scopes, registered.split(' '));
    }
    for (const scope of ['tools:call admin:all', 'offline_access', ['tools:call'], 'tools:call\temail:read']) {
      const res = await register({ redirect_uris: ['https://app.example/cb'], scope });
      assert.equal(res.statusCode, 400, String(scope));
      assert.equal(res.json().error, 'invalid_client_metadata');
    }
  });

  test('a client registered for tools:call cannot be authorized for more (it was widened to all five)', async () => {
    const { client_id } = (await register({ redirect_uris: [REDIRECT], scope: 'tools:call' })).json();
    const res = await t.inject(authorizeQuery(client_id, pkcePair().challenge, { scope: 'wallet:read tools:call' }));
    assert.equal(res.statusCode, 302, res.body);
    const back = new URL(res.headers.location as string);
    assert.equal(back.searchParams.get('error'), 'invalid_scope');
    const asked = await t.inject(authorizeQuery(client_id, pkcePair().challenge, { scope: 'tools:call' }));
    assert.equal(asked.statusCode, 200, asked.body);
  });

  test("a native app's private-use scheme is accepted; browser schemes are not", async () => {
    const ok = await register({
      application_type: 'native',
      redirect_uris: ['cursor://anysphere.cursor-retrieval/oauth/callback', 'com.example.app:/cb'],
    });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().application_type, 'native');
    for (const uri of ['javascript:alert(1)//', 'data:text/html,x', 'file:///etc/passwd']) {
      const res = await register({ redirect_uris: [uri] });
      assert.equal(res.statusCode, 400, uri);
      assert.equal(res.json().error, 'invalid_redirect_uri');
    }
  });

  test('each refusal answers 400 in RFC 7591 form and stores nothing', async () => {
    const before = (await t.app.services.oauth.clients.list()).length;
    const cases: Array<[string, unknown, string]> = [
      ['no redirect_uris', { client_name: 'x' }, 'invalid_redirect_uri'],
      ['empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri'],
      ['redirect_uris not a list', { redirect_uris: 'https://app.example/cb' }, 'invalid_redirect_uri'],
      ['plain http off loopback', { redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
      ['fragment', { redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
      ['credentials', { redirect_uris: ['https://u:p@app.example/cb'] }, 'invalid_redirect_uri'],
      ['not a URL', { redirect_uris: ['not a url'] }, 'invalid_redirect_uri'],
      [
        'client_secret_basic',
        { redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' },
        'invalid_client_metadata',
      ],
      [
        'client_secret_post',
        { redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_post' },
        'invalid_client_metadata',
      ],
      [
        'client_credentials',
        { redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] },
        'invalid_client_metadata',
      ],
      [
        'refresh without code',
        { redirect_uris: ['https://app.example/cb'], grant_types: ['refresh_token'] },
        'invalid_client_metadata',
      ],
      ['implicit', { redirect_uris: ['https://app.example/cb'], response_types: ['token'] }, 'invalid_client_metadata'],
      ['empty name', { redirect_uris: ['https://app.example/cb'], client_name: ' ' }, 'invalid_client_metadata'],
      [
        'long name',
        { redirect_uris: ['https://app.example/cb'], client_name: 'x'.repeat(121) },
        'invalid_client_metadata',
      ],
      [
        'control characters',
        { redirect_uris: ['https://app.example/cb'], client_name: 'a\u0000b' },
        'invalid_client_metadata',
      ],
      ['chosen client_id', { redirect_uris: ['https://app.example/cb'], client_id: 'mine' }, 'invalid_client_metadata'],
      ['an array', [{ redirect_uris: ['https://app.example/cb'] }], 'invalid_client_metadata'],
    ];
    for (const [name, payload, error] of cases) {
      const res = await register(payload);
      assert.equal(res.statusCode, 400, name);
      assert.equal(res.headers['cache-control'], 'no-store', name);
      const body = res.json();
      assert.equal(body.error, error, name);
      assert.equal(typeof body.error_description, 'string', name);
      assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'], name);
    }
    const broken = await t.inject({
      method: 'POST',
      url: REGISTER,
      headers: { 'content-type': 'application/json' },
      payload: '{"redirect_uris": [',
    });
    assert.equal(broken.statusCode, 400);
    assert.equal(broken.json().error, 'invalid_client_metadata');
    const wrongType = await t.inject({ method: 'POST', url: REGISTER, ...{ headers: FORM_HEADERS }, payload: 'a=b' });
    assert.equal(wrongType.statusCode, 415);
    assert.equal(wrongType.json().error, 'invalid_request');
    assert.equal((await t.app.services.oauth.clients.list()).length, before);
  });

  test('a registered client goes through the whole code flow with PKCE, on any loopback port', async () => {
    const registered = (
      await register({
        client_name: 'Loop <Tool>',
        redirect_uris: ['http://127.0.0.1/callback'],
        scope: 'email:read profile:read',
      })
    ).json();
    const user = await makeUser(t.app);
    const { verifier, challenge } = pkcePair();
    const redirectUri = 'http://127.0.0.1:51234/callback';
    const { location, consent } = await authorizeAndAllow(
      t,
      authorizeQuery(registered.client_id, challenge, { redirect_uri: redirectUri }),
      user.email,
      user.password,
    );
    assert.equal(consent.statusCode, 200);
    assert.match(consent.payload, /Loop &lt;Tool&gt;/);
    assert.match(consent.payload, /unverified/);
    assert.match(consent.payload, /http:\/\/127\.0\.0\.1:51234/);
    assert.equal(`${location.origin}${location.pathname}`, redirectUri);
    const res = await t.inject({
      method: 'POST',
      url: TOKEN,
      headers: FORM_HEADERS,
      payload: form({
        grant_type: 'authorization_code',
        client_id: registered.client_id,
        code: location.searchParams.get('code')!,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }),
    });
    assert.equal(res.statusCode, 200, res.body);
    const tokens = res.json();
    assert.equal(tokens.scope, 'email:read profile:read');
    const refreshed = await t.inject({
      method: 'POST',
      url: TOKEN,
      headers: FORM_HEADERS,
      payload: form({
        grant_type: 'refresh_token',
        client_id: registered.client_id,
        refresh_token: tokens.refresh_token,
      }),
    });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
  });
});

describe('loopback redirect URIs (RFC 8252 7.3)', () => {
  const page = async (clientId: string, redirectUri: string) =>
    (await t.inject(authorizeQuery(clientId, pkcePair().challenge, { redirect_uri: redirectUri }))).statusCode;

  test('a public client created with the CLI: any port, same host, path and query', async () => {
    const client = await makeClient(t, {
      type: 'public',
      redirectUris: ['http://127.0.0.1:9999/cb', 'http://localhost/cb?app=1', 'https://app.example/cb'],
    });
    assert.equal(await page(client.clientId, 'http://127.0.0.1:9999/cb'), 200);
    assert.equal(await page(client.clientId, 'http://127.0.0.1:50000/cb'), 200);
    assert.equal(await page(client.clientId, 'http://127.0.0.1/cb'), 200);
    assert.equal(await page(client.clientId, 'http://localhost:7/cb?app=1'), 200);
    assert.equal(await page(client.clientId, 'http://127.0.0.1:50000/other'), 400);
    assert.equal(await page(client.clientId, 'http://localhost:7/cb'), 400);
    assert.equal(await page(client.clientId, 'http://localhost:50000/cb'), 400);
    assert.equal(await page(client.clientId, 'http://[::1]:50000/cb'), 400);
    assert.equal(await page(client.clientId, 'https://127.0.0.1:50000/cb'), 400);
    assert.equal(await page(client.clientId, 'https://app.example:444/cb'), 400);
  });

  test('a confidential client keeps the exact match', async () => {
    const client = await makeClient(t, { redirectUris: ['http://127.0.0.1:9999/cb'] });
    assert.equal(await page(client.clientId, 'http://127.0.0.1:9999/cb'), 200);
    assert.equal(await page(client.clientId, 'http://127.0.0.1:50000/cb'), 400);
  });
});

test('the purge job removes self-registered clients unused after a day, and nothing else', async () => {
  const job = collectJobs(t.app).find((j) => j.name === 'oauth.purge-unused-clients')!;
  const { clients } = t.app.services.oauth;
  const unused = (await register({ redirect_uris: ['https://gc.example/cb'] })).json().client_id;
  const used = (await register({ redirect_uris: [REDIRECT], scope: 'email:read profile:read' })).json().client_id;
  const user = await makeUser(t.app);
  await authorizeAndAllow(t, authorizeQuery(used, pkcePair().challenge), user.email, user.password);
  const cliClient = (await makeClient(t, { type: 'public' })).clientId;
  clock.advance(25 * 3_600_000);
  const recent = (await register({ redirect_uris: ['https://gc.example/cb'] })).json().client_id;
  const removed = await job.run(clock.now());
  assert.ok((removed as number) >= 1);
  assert.equal(await clients.find(unused), null);
  for (const id of [used, cliClient, recent]) assert.ok(await clients.find(id), id);
});

test('rate-limited per client address: 429 with Retry-After', async () => {
  const limited = withJson(await createTestApp());
  try {
    const one = (address: string) =>
      limited.inject({
        method: 'POST',
        url: REGISTER,
        payload: { redirect_uris: ['https://app.example/cb'] },
        remoteAddress: address,
      });
    for (let i = 0; i < 20; i++) assert.equal((await one('198.51.100.7')).statusCode, 201);
    const refused = await one('198.51.100.7');
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(refused.json().error, 'invalid_request');
    assert.equal((await one('198.51.100.8')).statusCode, 201);
  } finally {
    await limited.close();
  }
});

test('GANTRY_OAUTH_DYNAMIC_REGISTRATION=false: not advertised, and the endpoint says it is off', async () => {
  const off = withJson(await createTestApp({ env: { GANTRY_OAUTH_DYNAMIC_REGISTRATION: 'false' } }));
  try {
    const doc = (await off.inject({ url: '/.well-known/oauth-authorization-server' })).json();
    assert.equal(doc.registration_endpoint, undefined);
    assert.equal(doc.client_id_metadata_document_supported, true);
    const res = await off.inject({
      method: 'POST',
      url: REGISTER,
      payload: { redirect_uris: ['https://a.example/cb'] },
    });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error, 'access_denied');
    assert.match(res.json().error_description, /switched off/);
    assert.equal((await off.app.services.oauth.clients.list()).length, 0);
  } finally {
    await off.close();
  }
});
