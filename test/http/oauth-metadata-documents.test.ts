import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp } from '../helpers/app.js';
import { bearer, makeUser } from '../helpers/factories.js';
import { withJson } from '../helpers/json-inject.js';
import { startDocumentHost, type DocumentHost } from '../helpers/metadata-documents.js';
import { authorizeAndAllow, authorizeQuery, form, FORM_HEADERS, pkcePair, REDIRECT } from '../helpers/oauth.js';

const TOKEN = '/api/v1/oauth/token';
let t: ReturnType<typeof withJson>;
let clock: ManualClock;
let host: DocumentHost;
before(async () => {
  host = await startDocumentHost();
  clock = new ManualClock(new Date());
  // The document host listens on loopback: private networks must be allowed (plain http too, then).
  t = withJson(
    await createTestApp({ clock, env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', GANTRY_RATE_LIMIT_MULTIPLIER: '100' } }),
  );
});
after(async () => {
  await t.close();
  await host.close();
});

const authorizePage = (clientId: string, redirectUri = REDIRECT) =>
  t.inject(authorizeQuery(clientId, pkcePair().challenge, { redirect_uri: redirectUri }));

async function refused(clientId: string, message: RegExp, redirectUri = REDIRECT) {
  const res = await authorizePage(clientId, redirectUri);
  assert.equal(res.statusCode, 400, res.payload);
  assert.equal(res.headers.location, undefined);
  assert.match(res.payload, message);
}

/** The whole answer of a failed fetch, the same whatever the cause (docs/oauth.md, Client ID Metadata Documents). */
const NOT_FETCHED_PAGE =
  /<h1>This sign-in request cannot be completed<\/h1>\n<p>[^<]+<\/p>\n<p class="muted">For the developer: This application&#39;s metadata document could not be fetched\.<\/p>/;

/**
 * A document that could not be fetched: 400, no redirect, the one message (its text returned to
 * compare), and the cause in the log line only.
 */
async function notFetched(app: typeof t, clientId: string, cause: RegExp) {
  const res = await app.inject(authorizeQuery(clientId, pkcePair().challenge));
  assert.equal(res.statusCode, 400, res.payload);
  assert.equal(res.headers.location, undefined);
  const shown = NOT_FETCHED_PAGE.exec(res.payload);
  assert.ok(shown, res.payload);
  const line = app.logs
    .map((l) => JSON.parse(l) as { msg: string; clientId?: string; cause?: string })
    .findLast((l) => l.msg === 'oauth client metadata document not fetched' && l.clientId === clientId);
  assert.match(line?.cause ?? '', cause, JSON.stringify(line));
  return { page: shown[0], body: res.payload };
}

describe('Client ID Metadata Documents at authorize', () => {
  test('the document is fetched once, kept for its max-age, then fetched again', async () => {
    const url = host.serve(
      '/cache.json',
      { client_name: 'Doc Client', redirect_uris: [REDIRECT], scope: 'email:read profile:read' },
      { headers: { 'cache-control': 'public, max-age=600' } },
    );
    const first = await authorizePage(url);
    assert.equal(first.statusCode, 200, first.payload);
    assert.match(first.payload, /Doc Client/);
    assert.equal((await authorizePage(url)).statusCode, 200);
    assert.equal(host.hits.get('/cache.json'), 1);
    const stored = await t.app.services.oauth.clients.show(url);
    assert.equal(stored.registration, 'metadata_document');
    assert.equal(stored.type, 'public');

    host.serve('/cache.json', {
      client_name: 'Doc Client 2',
      redirect_uris: [REDIRECT],
      scope: 'email:read profile:read',
    });
    clock.advance(601_000);
    const again = await authorizePage(url);
    assert.equal(host.hits.get('/cache.json'), 2);
    assert.match(again.payload, /Doc Client 2/);
  });

  test('max-age is held within 5 minutes and 24 hours', async () => {
    const url = host.serve('/short.json', { redirect_uris: [REDIRECT] }, { headers: { 'cache-control': 'max-age=1' } });
    await authorizePage(url);
    clock.advance(120_000);
    await authorizePage(url);
    assert.equal(host.hits.get('/short.json'), 1);
    clock.advance(200_000);
    await authorizePage(url);
    assert.equal(host.hits.get('/short.json'), 2);

    const long = host.serve(
      '/long.json',
      { redirect_uris: [REDIRECT] },
      { headers: { 'cache-control': 'max-age=31536000' } },
    );
    await authorizePage(long);
    clock.advance(24 * 3_600_000 + 1000);
    await authorizePage(long);
    assert.equal(host.hits.get('/long.json'), 2);
  });

  test("a document's client is registered for the scopes it lists; none listed: the MCP scope", async () => {
    const { clients } = t.app.services.oauth;
    const bare = host.serve('/bare.json', { redirect_uris: [REDIRECT] });
    const asked = await authorizePage(bare);
    assert.equal(new URL(asked.headers.location as string).searchParams.get('error'), 'invalid_scope');
    assert.deepEqual((await clients.show(bare)).scopes, ['tools:call']);
    const listed = host.serve('/listed.json', { redirect_uris: [REDIRECT], scope: 'profile:read email:read' });
    assert.equal((await authorizePage(listed)).statusCode, 200);
    assert.deepEqual((await clients.show(listed)).scopes, ['email:read', 'profile:read']);
    await refused(host.serve('/unknown.json', { redirect_uris: [REDIRECT], scope: 'admin' }), /Unknown scope admin/);
  });

  test('a document naming another client_id is refused', async () => {
    const url = host.serve('/mismatch.json', {
      client_id: 'https://other.example/client.json',
      redirect_uris: [REDIRECT],
    });
    await refused(url, /names another client_id/);
  });

  test('a redirect_uri the document does not list is refused, without redirecting', async () => {
    const url = host.serve('/redirects.json', { redirect_uris: [REDIRECT] });
    await refused(url, /redirect_uri is not registered/, 'https://evil.example/cb');
    await refused(url, /redirect_uri is not registered/, `${REDIRECT}/x`);
  });

  test('only a public client: another token_endpoint_auth_method, or a secret, is refused', async () => {
    await refused(
      host.serve('/basic.json', { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }),
      /must be none/,
    );
    await refused(host.serve('/secret.json', { redirect_uris: [REDIRECT], client_secret: 's' }), /client_secret/);
    await refused(host.serve('/noredirect.json', { client_name: 'x' }), /redirect_uris is required/);
  });

  test('N-L5: a document may not name a browser-launching redirect nor a confusable name', async () => {
    const launcher = 'microsoft-edge:https://evil.example/cb';
    await refused(host.serve('/edge.json', { redirect_uris: [launcher] }), /a browser or the system handles/, launcher);
    const web = { application_type: 'web', redirect_uris: [launcher] };
    await refused(host.serve('/edge-web.json', web), /must be an https URL/, launcher);
    const native = { application_type: 'native', redirect_uris: [launcher] };
    await refused(host.serve('/edge-native.json', native), /a browser or the system handles/, launcher);
    // An https redirect beside the app's scheme, and no type: a web client's document.
    const mixed = { redirect_uris: [REDIRECT, 'com.example.app:/cb'] };
    await refused(host.serve('/app.json', mixed), /application_type native/);
    await refused(host.serve('/brand.json', { client_name: 'Gantry', redirect_uris: [REDIRECT] }), /the name Gantry/);
    const bidi = { client_name: 'Claude\u202Eedoc', redirect_uris: [REDIRECT] };
    await refused(host.serve('/bidi.json', bidi), /invisible or text-direction/);
    const app = host.serve('/native.json', {
      application_type: 'native',
      redirect_uris: ['com.example.app:/cb'],
      scope: 'email:read profile:read',
    });
    assert.equal((await authorizePage(app, 'com.example.app:/cb')).statusCode, 200, "a native app's own scheme");
  });

  test('an oversized document is refused', async () => {
    const url = host.serve('/big.json', { redirect_uris: [REDIRECT], padding: 'a'.repeat(20_000) });
    await notFetched(t, url, /larger than 16384 bytes/);
  });

  test('a host that does not answer in time is given up on', async () => {
    const url = host.serve('/slow.json', { redirect_uris: [REDIRECT] }, { delayMs: 8_000 });
    const started = Date.now();
    await notFetched(t, url, /no answer within 5000 ms/);
    assert.ok(Date.now() - started < 7_000);
  });

  test('not JSON, an error status or a redirect is refused', async () => {
    host.routes.set('/text.json', { body: 'hello' });
    await notFetched(t, `${host.base}/text.json`, /not JSON/);
    await notFetched(t, `${host.base}/missing.json`, /HTTP 404/);
    host.routes.set('/moved.json', { status: 302, body: '', headers: { location: `${host.base}/cache.json` } });
    await notFetched(t, `${host.base}/moved.json`, /HTTP 302/);
  });

  test('client_id URLs that are not in the allowed form are refused unfetched', async () => {
    await refused('http://docs.example/client.json', /must use https/);
    await refused(`${host.base}/`, /must have a path/);
    await refused(`${host.base}/a/../cache.json`, /normal form/);
    await refused(`https://u:p@docs.example/client.json`, /credentials/);
  });

  test('a whole code flow: consent marks it unverified, the token endpoint takes the URL as a public client', async () => {
    const url = host.serve('/flow.json', {
      client_name: 'Flow Agent',
      redirect_uris: ['http://127.0.0.1/callback'],
      scope: 'email:read profile:read',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    const user = await makeUser(t.app);
    const { verifier, challenge } = pkcePair();
    const redirectUri = 'http://127.0.0.1:41000/callback';
    const query = authorizeQuery(url, challenge, { redirect_uri: redirectUri });
    // N-L5: the document's host is shown with the name it chose, on both pages.
    const named = `Flow Agent (unverified, published by ${new URL(host.base).host})`;
    const published = `with a document published by <strong>${new URL(host.base).host}</strong>`;
    const signInPage = (await t.inject(query)).payload;
    assert.ok(signInPage.includes(`<h1>Sign in to continue to ${named}</h1>`), signInPage);
    assert.ok(signInPage.includes(published), signInPage);
    const { location, consent } = await authorizeAndAllow(t, query, user.email, user.password);
    assert.ok(consent.payload.includes(`<h1>${named} wants to access your Gantry account</h1>`), consent.payload);
    assert.ok(consent.payload.includes(published));
    assert.match(consent.payload, /<strong>unverified<\/strong>/);
    assert.match(consent.payload, /127\.0\.0\.1:41000/);
    const res = await t.inject({
      method: 'POST',
      url: TOKEN,
      headers: FORM_HEADERS,
      payload: form({
        grant_type: 'authorization_code',
        client_id: url,
        code: location.searchParams.get('code')!,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }),
    });
    assert.equal(res.statusCode, 200, res.body);
    const tokens = res.json();
    const info = await t.inject({ url: '/api/v1/oauth/userinfo', headers: bearer(tokens.access_token) });
    assert.equal(info.statusCode, 200);
    assert.equal(info.json().sub, user.id);

    // The user sees the grant under the document's URL and can take it back.
    const session = await t.app.services.identity.sessions.start(user.id);
    const grants = await t.inject({ url: '/api/v1/oauth/grants', headers: bearer(session.accessToken) });
    assert.deepEqual(
      grants.json().data.map((g: { clientId: string }) => g.clientId),
      [url],
    );
    const revoked = await t.inject({
      method: 'DELETE',
      url: `/api/v1/oauth/grants/${encodeURIComponent(url)}`,
      headers: bearer(session.accessToken),
    });
    assert.equal(revoked.statusCode, 200, revoked.body);
    const refresh = await t.inject({
      method: 'POST',
      url: TOKEN,
      headers: FORM_HEADERS,
      payload: form({ grant_type: 'refresh_token', client_id: url, refresh_token: tokens.refresh_token }),
    });
    assert.equal(refresh.statusCode, 400);
    assert.equal(refresh.json().error, 'invalid_grant');
  });
});

test('a document URL that resolves to a private address is refused when private networks are not allowed', async () => {
  const guarded = withJson(await createTestApp());
  try {
    host.serve('/private.json', { redirect_uris: [REDIRECT] });
    const port = new URL(host.base).port;
    for (const url of [`https://127.0.0.1:${port}/private.json`, `https://localhost:${port}/private.json`])
      await notFetched(guarded, url, /internal address|loopback, private/);
    const plain = await guarded.inject(authorizeQuery(`${host.base}/private.json`, pkcePair().challenge));
    assert.equal(plain.statusCode, 400);
    assert.match(plain.payload, /must use https/);
    assert.equal(host.hits.get('/private.json'), undefined);
  } finally {
    await guarded.close();
  }
});

test('N-L4: the authorize page is no DNS or port oracle: every fetch failure answers the same page', async () => {
  // The review's cases: a name of an internal host, an internal address, a name that does not
  // resolve, a port that refuses the connection. The precise cause is in the log line only.
  const guarded = withJson(await createTestApp());
  const closed = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  try {
    const port = new URL(host.base).port;
    const answers = [
      await notFetched(guarded, `https://localhost:${port}/c.json`, /localhost is an internal address/),
      await notFetched(guarded, `https://127.0.0.1:${port}/c.json`, /resolves to a loopback, private/),
      await notFetched(guarded, 'https://doesnotexist-xyz.invalid/c.json', /does not resolve/),
      await notFetched(t, `https://127.0.0.1:${closed}/c.json`, /ECONNREFUSED/),
    ];
    for (const answer of answers) {
      assert.equal(answer.page, answers[0].page);
      assert.doesNotMatch(answer.body, /resolve|internal|loopback|ECONNREFUSED|127\.0\.0\.1|localhost|invalid/i);
    }
  } finally {
    await guarded.close();
  }
});
