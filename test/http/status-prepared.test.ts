import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { requestsOverSocket } from '../helpers/over-socket.js';

const PATH = '/api/v1/status';
/** Headers that differ between any two answers (per request or per moment). */
const PER_REQUEST = new Set(['date', 'x-request-id', 'keep-alive', 'connection']);

const headersOf = (res: Response): Record<string, string> =>
  Object.fromEntries([...res.headers].filter(([name]) => !PER_REQUEST.has(name)));

/**
 * GET /api/v1/status over a real socket: once prepared, the summary is written from memory in
 * front of hapi (src/http/prepared.ts); it must be the route's answer, byte for byte and header
 * for header, and never outlive a change (docs/status.md, Projections and caching).
 */
describe('status summary: prepared answers in front of hapi', () => {
  let t: TestApp;
  /** Sends a request and tells whether hapi saw it. */
  let get: ReturnType<typeof requestsOverSocket>;
  before(async () => {
    t = await createTestApp({ env: { GANTRY_METRICS_PORT: '0' } });
    await t.app.services.status.createService({ slug: 'core', name: 'Core' });
    await t.app.services.status.createComponent({ serviceSlug: 'core', slug: 'core-db', name: 'Database' });
    get = requestsOverSocket(t.server);
    await t.server.start();
  });
  after(() => t.close());

  it('the first request builds through the route; the next ones are the same answer from memory', async () => {
    const first = await get(PATH);
    assert.equal(first.res.status, 200);
    assert.equal(first.viaHapi, true, 'nothing is prepared before the route has built it');
    const second = await get(PATH);
    assert.equal(second.viaHapi, false, 'a prepared summary is answered without a hapi request');
    assert.equal(second.res.status, 200);
    assert.deepEqual(second.body, first.body);
    // The route's own answer to the same URL with a query string (which never takes the prepared path).
    const route = await get(`${PATH}?via=route`);
    assert.equal(route.viaHapi, true);
    assert.deepEqual(headersOf(second.res), headersOf(route.res));
    assert.deepEqual(second.body, route.body);
    for (const [name, value] of Object.entries({
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'public, max-age=30, stale-while-revalidate=300',
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(first.body.length),
    }))
      assert.equal(second.res.headers.get(name), value, name);
    assert.match(second.res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(Date.parse(second.res.headers.get('last-modified')!) <= Date.parse(second.res.headers.get('date')!));
  });

  it('answers 304 to a matching If-None-Match, keeps a well-formed inbound request id', async () => {
    const { res } = await get(PATH);
    const etag = res.headers.get('etag')!;
    const conditional = await get(PATH, { 'if-none-match': `W/${etag}`, 'x-request-id': 'proxy-req-0001' });
    assert.equal(conditional.viaHapi, false);
    assert.equal(conditional.res.status, 304);
    assert.equal(conditional.body.length, 0);
    assert.equal(conditional.res.headers.get('etag'), etag);
    assert.equal(conditional.res.headers.get('x-request-id'), 'proxy-req-0001');
    assert.equal(conditional.res.headers.get('x-frame-options'), 'DENY');
    const other = await get(PATH, { 'if-none-match': '"something-else"' });
    assert.equal(other.res.status, 200);
  });

  it('a change is never answered from the old bytes: the next answer is the new summary', async () => {
    const before_ = await get(PATH);
    await t.app.services.status.setComponentStatus('core-db', 'major_outage');
    // No wait: whether the rebuild has run yet or not, the answer is the new one.
    const after_ = await get(PATH, { 'if-none-match': before_.res.headers.get('etag')! });
    assert.equal(after_.res.status, 200);
    assert.notEqual(after_.res.headers.get('etag'), before_.res.headers.get('etag'));
    assert.equal(JSON.parse(after_.body.toString()).data.status, 'major_outage');
    const again = await get(PATH);
    assert.equal(again.res.headers.get('etag'), after_.res.headers.get('etag'));
    assert.equal(JSON.parse(again.body.toString()).data.status, 'major_outage');
    await t.app.services.status.setComponentStatus('core-db', 'operational');
  });

  it('leaves HEAD, other methods and other paths to hapi', async () => {
    await get(PATH);
    assert.equal((await get(PATH, {}, 'HEAD')).viaHapi, true);
    const post = await get(PATH, {}, 'POST');
    assert.equal(post.viaHapi, true);
    assert.equal(post.res.status, 404);
    assert.equal((await get(`${PATH}/services`)).viaHapi, true);
  });

  it('is counted in the request metrics and logged like any request', async () => {
    await get(PATH);
    const { viaHapi } = await get(PATH, { 'x-request-id': 'prepared-log-0001' });
    assert.equal(viaHapi, false);
    const scrape = (await t.app.kernel.metrics.scrape()).body;
    const count = /gantry_http_requests_total\{route="status\.summary",method="GET",status="200"\} (\d+)/.exec(scrape);
    assert.ok(count && Number(count[1]) >= 2, scrape.slice(0, 2000));
    const line = t.logs.find((l) => l.includes('prepared-log-0001'));
    assert.ok(line, 'the request log line');
    const entry = JSON.parse(line);
    assert.equal(entry.msg, 'request');
    assert.equal(entry.route, 'status.summary');
    assert.equal(entry.status, 200);
    assert.equal(entry.path, PATH);
    assert.equal(entry.ip, '127.0.0.1');
  });
});
