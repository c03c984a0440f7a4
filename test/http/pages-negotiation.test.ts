import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';

/**
 * Unknown paths, the home page and the icon, for a person's browser and for an API client
 * (docs/kernel.md, Pages: unknown paths and the home page): a browser gets pages, a JSON client
 * keeps the envelope, and the machine paths (/api, /.well-known) stay JSON for everyone.
 */
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

function assertEnvelope404(
  res: { statusCode: number; headers: Record<string, unknown>; payload: string },
  what: string,
) {
  assert.equal(res.statusCode, 404, what);
  assert.match(String(res.headers['content-type']), /^application\/json/, what);
  const body = JSON.parse(res.payload);
  assert.equal(body.data, null, what);
  assert.equal(body.error.code, 'NOT_FOUND', what);
  assert.equal(body.error.message, 'No such endpoint', what);
  assert.equal(body.meta.requestId, res.headers['x-request-id'], what);
}

describe('what a browser and an API client get for unknown paths, the home page and the icon', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('a browser asking for a path no route has gets an HTML 404 page: its words, the way home, the reference', async () => {
    for (const path of ['/login', '/logout', '/no/such/page', '/settings', '/status/nope']) {
      const res = await t.inject({ url: path, headers: { accept: BROWSER } });
      assert.equal(res.statusCode, 404, path);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', path);
      assert.match(res.payload, /^<!doctype html>\n<html lang="en">/, path);
      assert.match(res.payload, /<title>Page not found · Gantry<\/title>/, path);
      assert.match(res.payload, /<h1>Page not found<\/h1>/, path);
      assert.match(res.payload, /<a class="btn btn-secondary" href="\/">Go to the home page<\/a>/, path);
      assert.ok(res.payload.includes(`<code>${res.headers['x-request-id']}</code>`), 'the reference is the request id');
      assert.match(String(res.headers['content-security-policy']), /^default-src 'none'; style-src 'self';/);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.doesNotMatch(res.payload, /NOT_FOUND|"error"/);
    }
    // Any method: a form posted to a mistyped address is a page too.
    const posted = await t.inject({ method: 'POST', url: '/logout', headers: { accept: BROWSER } });
    assert.equal(posted.statusCode, 404);
    assert.match(posted.payload, /<h1>Page not found<\/h1>/);
  });

  it('an API client keeps the envelope: JSON, any type, or no Accept at all', async () => {
    for (const accept of [
      'application/json',
      '*/*',
      'application/json, text/plain, */*',
      'text/html;q=0.1, application/json',
      undefined,
    ])
      assertEnvelope404(
        await t.inject({ url: '/no/such/page', headers: accept ? { accept } : {} }),
        `Accept: ${accept ?? '(none)'}`,
      );
  });

  it('the machine paths stay JSON even for a browser: the API and the well-known documents', async () => {
    for (const path of ['/api/v1/no-such-endpoint', '/api/v1', '/api/v1/oauth/nope', '/.well-known/nothing-here'])
      assertEnvelope404(await t.inject({ url: path, headers: { accept: BROWSER } }), path);
  });

  it('the home page: for a browser the brand, sign-in, the status page and the API reference; JSON clients get the 404', async () => {
    const home = await t.inject({ url: '/', headers: { accept: BROWSER } });
    assert.equal(home.statusCode, 200);
    assert.equal(home.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(home.payload, /<title>Home · Gantry<\/title>/);
    assert.match(home.payload, /<h1>Welcome to Gantry<\/h1>/);
    assert.match(home.payload, /<a class="btn btn-primary" href="\/account">Sign in<\/a>/);
    assert.match(home.payload, /<a class="btn btn-secondary" href="\/status">Service status<\/a>/);
    assert.match(home.payload, /<a href="\/api\/v1\/openapi\.json">API reference<\/a>/);
    assert.equal((await t.inject('/api/v1/openapi.json')).statusCode, 200, 'the reference it links exists');
    for (const accept of ['application/json', '*/*', undefined])
      assertEnvelope404(await t.inject({ url: '/', headers: accept ? { accept } : {} }), `/ with ${accept}`);

    // Signed in (the browser session of the pages): the account, and who.
    const user = await makeUser(t.app);
    const session = await t.app.services.identity.browserSessions.start(user.id);
    const signedIn = await t.inject({ url: '/', headers: { accept: BROWSER, cookie: `gantry_session=${session}` } });
    assert.match(signedIn.payload, new RegExp(`Signed in as <strong>${user.email.replace(/\./g, '\\.')}</strong>`));
    assert.match(signedIn.payload, /<a class="btn btn-primary" href="\/account">Your account<\/a>/);
  });

  it("the icon: the brand's monogram under a hashed name (cached for good), linked by every page, and at /favicon.ico", async () => {
    const kit = t.app.kernel.pages;
    assert.match(kit.iconPath, /^\/assets\/icon\.[0-9a-f]{16}\.svg$/);
    const icon = await t.inject(kit.iconPath);
    assert.equal(icon.statusCode, 200);
    assert.equal(icon.headers['content-type'], 'image/svg+xml');
    assert.equal(icon.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(icon.headers['content-security-policy'], "default-src 'none'");
    assert.match(icon.payload, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*>G<\/text><\/svg>$/);
    assert.doesNotMatch(icon.payload, /<script|on\w+=/i);
    // A browser asks for /favicon.ico by itself (on a JSON answer too): never the envelope.
    for (const accept of [BROWSER, 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', undefined]) {
      const favicon = await t.inject({ url: '/favicon.ico', headers: accept ? { accept } : {} });
      assert.equal(favicon.statusCode, 200);
      assert.equal(favicon.headers['content-type'], 'image/svg+xml');
      assert.equal(favicon.payload, icon.payload);
    }
    const page = await t.inject('/auth/forgot-password');
    assert.ok(page.payload.includes(`<link rel="icon" href="${kit.iconPath}" type="image/svg+xml">`));
    assert.match(page.payload, /<meta name="color-scheme" content="light dark">/);
  });

  it('the HTML 429 page says how long to wait in words, never an HTTP header name', async () => {
    const remoteAddress = '10.61.0.1';
    let refused: Awaited<ReturnType<TestApp['inject']>> | undefined;
    for (let i = 0; i < 25 && !refused; i++) {
      const res = await t.inject({ url: '/auth/magic?token=x', remoteAddress, headers: { accept: BROWSER } });
      if (res.statusCode === 429) refused = res;
    }
    assert.ok(refused, 'the link landing page refuses past its limit');
    const wait = Number(refused.headers['retry-after']);
    assert.ok(wait > 0 && wait <= 60, String(wait));
    assert.match(refused.payload, /<h1>Too many attempts<\/h1>/);
    const words = wait < 60 ? `${wait} second${wait === 1 ? '' : 's'}` : '1 minute';
    assert.ok(refused.payload.includes(`Too many attempts. Wait ${words}, then try again.`), refused.payload);
    assert.doesNotMatch(refused.payload, /Retry-After/i);
  });
});

describe('an operator brand on the home page, the 404 page and the icon', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp({ env: { GANTRY_BRAND_NAME: 'Northwind Cloud' } })));
  after(() => t.close());

  it('names the operator', async () => {
    const home = await t.inject({ url: '/', headers: { accept: BROWSER } });
    assert.match(home.payload, /<h1>Welcome to Northwind Cloud<\/h1>/);
    const missing = await t.inject({ url: '/nope', headers: { accept: BROWSER } });
    assert.match(missing.payload, /<title>Page not found · Northwind Cloud<\/title>/);
    assert.match((await t.inject('/favicon.ico')).payload, />N<\/text><\/svg>$/);
  });
});

describe('the status listener (GANTRY_STATUS_PORT): its own home is the status page', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp({ statusOnly: true })));
  after(() => t.close());

  it('a browser gets the 404 page leading to /status; an API client the envelope', async () => {
    const res = await t.inject({ url: '/', headers: { accept: BROWSER } });
    assert.equal(res.statusCode, 404);
    assert.match(res.payload, /<a class="btn btn-secondary" href="\/status">Go to the home page<\/a>/);
    assertEnvelope404(await t.inject({ url: '/' }), 'status listener, JSON');
    assert.equal((await t.inject('/favicon.ico')).statusCode, 200);
  });
});
