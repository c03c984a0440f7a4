import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { requestsOverSocket } from '../helpers/over-socket.js';
import { bearer, makeAccount, signedInUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { userPrincipal } from '../../src/http/auth.js';

const PATH = '/api/v1/notifications/unread-count';
/** Headers that differ between any two answers (per request or per moment: the count left, the body's durationMs). */
const PER_REQUEST = new Set([
  'date',
  'x-request-id',
  'keep-alive',
  'connection',
  'x-ratelimit-remaining',
  'content-length',
]);

const headersOf = (res: Response): Record<string, string> =>
  Object.fromEntries([...res.headers].filter(([name]) => !PER_REQUEST.has(name)));

/**
 * GET /notifications/unread-count over a real socket: once the caller's token and count are in
 * memory it is answered in front of hapi (src/http/prepared.ts, docs/kernel.md, Prepared
 * answers). It must be the route's answer, header for header, counted once in the same limit,
 * and leave every caller it cannot decide from memory to the route, which refuses as always.
 */
describe('unread count: prepared answers for a known caller', () => {
  const clock = new ManualClock('2026-03-01T10:00:00.000Z');
  let t: TestApp;
  let send: ReturnType<typeof requestsOverSocket>;
  before(async () => {
    t = await createTestApp({ clock, env: { GANTRY_METRICS_PORT: '0' } });
    send = requestsOverSocket(t.server);
    await t.server.start();
  });
  after(() => t.close());

  /** Sends a request and tells whether hapi saw it; the body as text and as JSON. */
  async function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
    const { res, body, viaHapi } = await send(url, headers, method);
    const text = body.toString();
    return { res, text, body: text ? JSON.parse(text) : null, viaHapi };
  }
  const remaining = (res: Response) => Number(res.headers.get('x-ratelimit-remaining'));
  const notify = (userId: string, title: string) =>
    t.app.services.notifications.notifyNow({ userId, title, body: `${title} body` });

  it('the first request goes through the route; the next ones are its answer from memory, counted once each', async () => {
    const u = await signedInUser(t.app);
    await notify(u.user.id, 'one');
    const first = await get(PATH, u.headers);
    assert.equal(first.res.status, 200, first.text);
    assert.equal(first.viaHapi, true, 'nothing is known of the token before the route has verified it');
    assert.equal(first.body.data.count, 1);
    const second = await get(PATH, u.headers);
    assert.equal(second.viaHapi, false, 'a known caller with a cached count is answered without a hapi request');
    assert.equal(second.res.status, 200);
    // The route's own answer to the same URL with a query string (never the prepared path).
    const route = await get(`${PATH}?via=route`, u.headers);
    assert.equal(route.viaHapi, true);
    assert.deepEqual(headersOf(second.res), headersOf(route.res));
    for (const answer of [second, route]) {
      assert.deepEqual(Object.keys(answer.body), ['data', 'meta', 'error']);
      assert.deepEqual(answer.body.data, { count: 1 });
      assert.deepEqual(Object.keys(answer.body.meta), ['requestId', 'durationMs']);
      assert.equal(answer.body.meta.requestId, answer.res.headers.get('x-request-id'));
      assert.equal(answer.body.error, null);
    }
    for (const [name, value] of Object.entries({
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-limit': '60',
      'content-length': String(Buffer.byteLength(second.text)),
    }))
      assert.equal(second.res.headers.get(name), value, name);
    // One limit for both paths, each request counted once.
    assert.deepEqual(
      [first, second, route].map((a) => remaining(a.res)),
      [59, 58, 57],
    );
    assert.equal(second.res.headers.get('x-ratelimit-reset'), route.res.headers.get('x-ratelimit-reset'));
  });

  it('a new notification is counted: the route answers the new count, then memory does', async () => {
    const u = await signedInUser(t.app);
    await get(PATH, u.headers);
    assert.equal((await get(PATH, u.headers)).viaHapi, false);
    await notify(u.user.id, 'fresh');
    const changed = await get(PATH, u.headers);
    assert.equal(changed.body.data.count, 1);
    const again = await get(PATH, u.headers);
    assert.equal(again.viaHapi, false);
    assert.equal(again.body.data.count, 1);
    await t.inject({ method: 'POST', url: '/api/v1/notifications/mark-all-read', headers: u.headers });
    assert.equal((await get(PATH, u.headers)).body.data.count, 0);
  });

  it('past the limit the route refuses with 429 and Retry-After; a new window is answered from memory again', async () => {
    const u = await signedInUser(t.app);
    const answers = [];
    for (let i = 0; i < 61; i++) answers.push(await get(PATH, u.headers));
    assert.deepEqual(
      answers.slice(0, 60).map((a) => a.res.status),
      Array(60).fill(200),
    );
    assert.ok(answers.slice(1, 60).every((a) => !a.viaHapi));
    assert.equal(remaining(answers[59].res), 0);
    const refused = answers[60];
    assert.equal(refused.res.status, 429);
    assert.equal(refused.viaHapi, true);
    assert.equal(refused.body.error.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(refused.res.headers.get('retry-after'), '60');
    const scrape = (await t.app.kernel.metrics.scrape()).body;
    assert.match(scrape, /gantry_rate_limit_rejections_total\{rule="notifications\.unread-count"\} 1/);
    clock.advance(60_000);
    const renewed = [await get(PATH, u.headers), await get(PATH, u.headers)];
    assert.deepEqual(
      renewed.map((a) => [a.res.status, remaining(a.res)]),
      [
        [200, 59],
        [200, 58],
      ],
    );
    assert.equal(renewed[1].viaHapi, false);
  });

  it('a signed-out session is refused at once, an expired token when it expires', async () => {
    const u = await signedInUser(t.app);
    await get(PATH, u.headers);
    assert.equal((await get(PATH, u.headers)).viaHapi, false);
    await t.app.services.identity.sessions.revoke(t.app.kernel.db, u.sessionId, 'signed out');
    const revoked = await get(PATH, u.headers);
    assert.equal(revoked.res.status, 401);
    assert.equal(revoked.viaHapi, true);
    assert.equal(revoked.body.error.code, 'UNAUTHORIZED');

    const v = await signedInUser(t.app);
    await get(PATH, v.headers);
    assert.equal((await get(PATH, v.headers)).viaHapi, false);
    clock.advance(61 * 60_000); // session access tokens live an hour
    const expired = await get(PATH, v.headers);
    assert.equal(expired.res.status, 401);
    assert.equal(expired.viaHapi, true);
    assert.match(expired.res.headers.get('www-authenticate') ?? '', /invalid_token/);
  });

  it('leaves other credentials, malformed headers, HEAD and other URLs to the route', async () => {
    const owner = await signedInUser(t.app);
    const account = await makeAccount(t.app, owner.user.id);
    const { key } = await t.app.services.accounts.apiKeys.create(userPrincipal(owner.user.id), account.id, 'poller');
    for (let i = 0; i < 2; i++) {
      const byKey = await get(PATH, bearer(key));
      assert.equal(byKey.viaHapi, true);
      assert.equal(byKey.res.status, 403);
      assert.equal(byKey.body.error.code, 'FORBIDDEN');
    }
    assert.equal((await get(PATH)).res.status, 401);
    const malformed = await get(PATH, { authorization: `Basic ${owner.token}` });
    assert.equal(malformed.res.status, 401);
    assert.equal(malformed.viaHapi, true);
    await get(PATH, owner.headers);
    assert.equal((await get(PATH, owner.headers)).viaHapi, false);
    assert.equal((await get(PATH, owner.headers, 'HEAD')).viaHapi, true);
    assert.equal((await get(`${PATH}/`, owner.headers)).viaHapi, true);
  });

  it('is counted in the request metrics and logged with its caller', async () => {
    const u = await signedInUser(t.app);
    await get(PATH, u.headers);
    const { viaHapi, body } = await get(PATH, { ...u.headers, 'x-request-id': 'unread-log-0001' });
    assert.equal(viaHapi, false);
    assert.equal(body.meta.requestId, 'unread-log-0001');
    const scrape = (await t.app.kernel.metrics.scrape()).body;
    const count =
      /gantry_http_requests_total\{route="notifications\.unread-count",method="GET",status="200"\} (\d+)/.exec(scrape);
    assert.ok(count && Number(count[1]) >= 2, scrape.slice(0, 2000));
    const line = t.logs.find((l) => l.includes('unread-log-0001'));
    assert.ok(line, 'the request log line');
    const entry = JSON.parse(line);
    assert.equal(entry.msg, 'request');
    assert.equal(entry.route, 'notifications.unread-count');
    assert.equal(entry.status, 200);
    assert.equal(entry.userId, u.user.id);
    assert.equal(entry.ip, '127.0.0.1');
  });
});
