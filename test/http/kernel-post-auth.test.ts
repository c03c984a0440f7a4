import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Hapi, { type RouteSettings, type Server } from '@hapi/hapi';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signedInUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { registerBearerAuth, type Principal } from '../../src/http/auth.js';
import { installPostAuthSteps } from '../../src/http/post-auth.js';
import type { RateLimitCount } from '../../src/http/rate-limit.js';

const postAuthSteps = (settings: RouteSettings) => [settings.ext?.onPostAuth ?? []].flat().length;

describe('the step after authentication (docs/kernel.md, Rate limits)', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00Z');
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  it('is a step of every route but the authenticated GETs, which the bearer scheme counts', () => {
    const route = (method: string, path: string) => {
      const found = t.server.table().find((r) => r.method === method && r.path === `/api/v1${path}`);
      assert.ok(found, `${method} ${path}`);
      return postAuthSteps(found.settings);
    };
    assert.equal(route('get', '/notifications/unread-count'), 0);
    assert.equal(route('get', '/notifications'), 0);
    assert.equal(route('get', '/auth/me'), 0);
    // Anonymous or optional GETs, and everything with a body, keep the step.
    assert.equal(route('get', '/auth/check-username'), 1);
    assert.equal(route('get', '/status'), 1);
    assert.equal(route('post', '/auth/login'), 1);
    assert.equal(route('patch', '/notifications/{id}/read'), 1);
  });

  it('counts an authenticated GET and HEAD in the scheme: headers, 429 with the caller named, metric', async () => {
    const user = await signedInUser(t.app);
    const other = await signedInUser(t.app);
    const call = (method: 'GET' | 'HEAD', who = user) =>
      t.inject({ method, url: '/api/v1/notifications/unread-count', headers: who.headers });
    const started = clock.now().getTime();
    for (let i = 1; i <= 60; i++) {
      const res = await call(i % 2 ? 'GET' : 'HEAD');
      assert.equal(res.statusCode, 200, `call ${i}`);
      assert.equal(res.headers['x-ratelimit-limit'], '60');
      assert.equal(res.headers['x-ratelimit-remaining'], String(60 - i));
    }
    const refused = await call('GET');
    assert.equal(refused.statusCode, 429);
    const body = JSON.parse(refused.payload);
    assert.equal(body.data, null);
    assert.equal(body.error.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(refused.headers['x-request-id'], body.meta.requestId);
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
    assert.equal(refused.headers['x-ratelimit-reset'], String(Math.ceil((started + 60_000) / 1000)));
    assert.equal(refused.headers['retry-after'], '60');
    const line = t.logs
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'request' && l.requestId === body.meta.requestId);
    assert.equal(line?.status, 429);
    assert.equal(line?.userId, user.user.id);
    const { body: scraped } = await t.app.kernel.metrics.scrape();
    assert.match(scraped, /gantry_rate_limit_rejections_total\{rule="notifications.unread-count"\} 1\b/);
    // Another user has a bucket of their own; an invalid token is refused before any count.
    assert.equal((await call('GET', other)).headers['x-ratelimit-remaining'], '59');
    const invalid = await t.inject({
      method: 'GET',
      url: '/api/v1/notifications/unread-count',
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(invalid.statusCode, 401);
    assert.equal(invalid.headers['x-ratelimit-limit'], undefined);
    clock.advance(60_000);
    assert.equal((await call('GET')).headers['x-ratelimit-remaining'], '59');
  });
});

describe('installPostAuthSteps', () => {
  const caller: Principal = {
    userId: 'u1',
    kind: 'session',
    scopes: null,
    clientId: null,
    sessionId: 's1',
    accountId: null,
    tokenId: 't1',
  };
  const setUp = () => {
    const counted: string[] = [];
    const count: RateLimitCount = (request, principal) => {
      counted.push(`${request.method} ${request.path} ${principal ? 'scheme' : 'step'}`);
      return undefined;
    };
    const server: Server = Hapi.server();
    const steps = installPostAuthSteps(server, count);
    registerBearerAuth(
      server,
      [{ name: 'test', verify: (token) => (token === 'ok' ? caller : null) }],
      steps.countInScheme,
    );
    return { server, steps, counted };
  };
  const handler = () => 'ok';

  it('counts each route once, in the scheme or in the step, through the server and wrapped plugins', async () => {
    const { server, steps, counted } = setUp();
    server.route([
      { method: 'GET', path: '/signed-in', handler },
      { method: 'GET', path: '/optional', options: { auth: { mode: 'optional' } }, handler },
      { method: 'POST', path: '/signed-in', handler },
    ]);
    await server.register(
      steps.plugin({
        name: 'p',
        register: (s) => s.route({ method: 'GET', path: '/anonymous', options: { auth: false }, handler }),
      }),
    );
    steps.assertCovered(server);
    const headers = { authorization: 'Bearer ok' };
    for (const [method, url, h] of [
      ['GET', '/signed-in', headers],
      ['GET', '/optional', headers],
      ['GET', '/optional', {}],
      ['POST', '/signed-in', headers],
      ['GET', '/anonymous', {}],
    ] as const)
      assert.equal((await server.inject({ method, url, headers: h })).statusCode, 200, `${method} ${url}`);
    assert.deepEqual(counted, [
      'get /signed-in scheme',
      'get /optional step',
      'get /optional step',
      'post /signed-in step',
      'get /anonymous step',
    ]);
  });

  it('refuses to start with a route that neither counts (added around the wrapper)', async () => {
    const { server, steps } = setUp();
    await server.register({ name: 'bare', register: (s) => s.route({ method: 'GET', path: '/signed-in', handler }) });
    steps.assertCovered(server);
    await server.register({
      name: 'bare-post',
      register: (s) => s.route({ method: 'POST', path: '/uncounted', handler }),
    });
    assert.throws(() => steps.assertCovered(server), /route POST \/uncounted has no rate limit step/);
  });
});
