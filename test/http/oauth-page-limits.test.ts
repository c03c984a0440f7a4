import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
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
} from '../helpers/oauth.js';

/** A person sees a page, not JSON, when a page is rate limited; Retry-After says how long. */
describe('429 on the sign-in, consent and magic-link pages', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00Z');
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  function assertHtml429(res: Awaited<ReturnType<TestApp['inject']>>, retryAfter: string) {
    assert.equal(res.statusCode, 429);
    assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(res.payload, /^<!doctype html>/i);
    assert.match(res.payload, /Too many attempts/);
    assert.throws(() => JSON.parse(res.payload));
    assert.equal(res.headers['retry-after'], retryAfter);
    assert.equal(res.headers['x-ratelimit-remaining'], '0');
    assert.ok(res.headers['x-ratelimit-limit']);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['cache-control'], 'no-store');
  }

  test('the sign-in page (GET /oauth/authorize), past its 120 per minute', async () => {
    const client = await makeClient(t);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    for (let i = 0; i < 120; i++)
      assert.equal((await t.inject({ method: 'GET', url, remoteAddress: '10.80.0.1' })).statusCode, 200);
    assertHtml429(await t.inject({ method: 'GET', url, remoteAddress: '10.80.0.1' }), '60');
  });

  test('the sign-in form once the login budget is spent: the sign-in page again, with Retry-After', async () => {
    const user = await makeUser(t.app);
    const client = await makeClient(t);
    for (let i = 0; i < 8; i++)
      await t.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: user.email, password: 'wrong password!' },
        remoteAddress: '10.81.0.1',
      });
    clock.advance(15_000);
    const page = await t.inject({
      method: 'GET',
      url: authorizeQuery(client.clientId, pkcePair().challenge),
      remoteAddress: '10.81.0.1',
    });
    const cookies = cookiesFrom(page.headers['set-cookie'] as string[] | string | undefined);
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      remoteAddress: '10.81.0.1',
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        csrf: hiddenInput(page.payload, 'csrf')!,
        request_state: hiddenInput(page.payload, 'request_state')!,
        email: user.email,
        password: user.password,
      }),
    });
    assertHtml429(res, '45');
    assert.equal(res.headers['x-ratelimit-limit'], '8');
    // Still the sign-in form (the email kept), and no session.
    assert.match(res.payload, /name="password"/);
    assert.doesNotMatch(String(res.headers['set-cookie'] ?? ''), /gantry_session=/);
    clock.advance(60_000);
  });

  test('the consent form (POST /oauth/authorize), past its 20 per minute: no code is issued', async () => {
    const user = await makeUser(t.app);
    const client = await makeClient(t);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const ip = '10.82.0.1';
    const page = await t.inject({ method: 'GET', url, remoteAddress: ip });
    const cookies = cookiesFrom(page.headers['set-cookie'] as string[] | string | undefined);
    const signedIn = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      remoteAddress: ip,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        csrf: hiddenInput(page.payload, 'csrf')!,
        request_state: hiddenInput(page.payload, 'request_state')!,
        email: user.email,
        password: user.password,
      }),
    });
    assert.equal(signedIn.statusCode, 303);
    Object.assign(cookies, cookiesFrom(signedIn.headers['set-cookie'] as string[] | string | undefined));
    const consent = await t.inject({
      method: 'GET',
      url,
      remoteAddress: ip,
      headers: { cookie: cookieHeader(cookies) },
    });
    assert.match(consent.payload, /name="decision"/);
    for (let i = 0; i < 19; i++)
      await t.inject({
        method: 'POST',
        url: AUTHORIZE,
        remoteAddress: ip,
        headers: FORM_HEADERS,
        payload: 'request_state=x',
      });
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      remoteAddress: ip,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        csrf: hiddenInput(consent.payload, 'csrf')!,
        request_state: hiddenInput(consent.payload, 'request_state')!,
        decision: 'allow',
      }),
    });
    assertHtml429(res, '60');
    assert.equal(res.headers.location, undefined);
    assert.deepEqual(await t.app.services.oauth.listGrants(user.id), []);
  });

  test('the magic-link landing page (GET /auth/magic), past its 20 per minute', async () => {
    for (let i = 0; i < 20; i++)
      assert.equal(
        (await t.inject({ method: 'GET', url: '/auth/magic?token=abc', remoteAddress: '10.83.0.1' })).statusCode,
        200,
      );
    assertHtml429(await t.inject({ method: 'GET', url: '/auth/magic?token=abc', remoteAddress: '10.83.0.1' }), '60');
  });
});
