import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { gunzipSync } from 'node:zlib';
import Hapi, { type Request, type ResponseToolkit, type Server } from '@hapi/hapi';
import {
  type DirectAnswer,
  type DirectFormCall,
  installDirectForms,
  serveDirectForm,
} from '../../src/http/direct-forms.js';
import type { AnsweredRequest } from '../../src/http/prepared.js';
import { registerResponses } from '../../src/http/responses.js';
import { createPageKit } from '../../src/http/pages.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { requestsOverSocket } from '../helpers/over-socket.js';

// The kernel's direct forms (docs/kernel.md, Direct forms) on a hapi server set up as Gantry's
// (security headers, the kernel's responses): a plain form POST of the registered path is the
// handler's, written without a hapi request, and answered as the route answers the same form
// (the route reached with a query string, which keeps a request from the direct path).
const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'accept-encoding': 'identity' };
const DECISION = { allowed: true, limit: 120, remaining: 119, resetAt: new Date('2030-01-01T00:01:00Z') };
const VARYING = new Set(['date', 'connection', 'keep-alive']);
const headersOf = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => !VARYING.has(name)));

/** What the route and the direct form both answer: as routes.ts's tokenAnswer is shared. */
async function formAnswer(
  form: Record<string, unknown>,
  call: Pick<DirectFormCall, 'rateLimit'>,
): Promise<DirectAnswer> {
  call.rateLimit = DECISION;
  if (form.fail === 'yes') throw new Error('handler failed');
  const body = form.big ? { form, pad: 'x'.repeat(2000) } : { form };
  return { status: form.status ? Number(form.status) : 200, body, headers: { 'Cache-Control': 'no-store' } };
}

describe('direct forms', () => {
  let server: Server;
  let send: ReturnType<typeof requestsOverSocket>;
  const calls: DirectFormCall[] = [];
  const recorded: AnsweredRequest[] = [];
  const hapiStatuses: number[] = [];
  const logs: string[] = [];

  before(async () => {
    server = Hapi.server({
      port: 0,
      host: '127.0.0.1',
      routes: {
        security: { noSniff: true, referrer: 'no-referrer', hsts: false, xframe: 'deny', xss: false, noOpen: false },
      },
    });
    const logger = createLogger('error', (line) => logs.push(line));
    const pages = createPageKit({ name: 'Gantry', logoUrl: null });
    const answerError = registerResponses(server, logger, systemClock, pages, () => undefined);
    server.events.on('response', (r) => hapiStatuses.push((r.response as { statusCode: number }).statusCode));
    server.route({
      method: 'POST',
      path: '/form',
      options: {
        id: 'test.form',
        payload: { maxBytes: 64, timeout: 300 },
        plugins: { gantry: { errorFormat: (e: { message: string }) => ({ body: { oops: e.message } }) } },
      },
      handler: async (request: Request, h: ResponseToolkit) => {
        const call: Pick<DirectFormCall, 'rateLimit'> = {};
        try {
          const answer = await formAnswer((request.payload ?? {}) as Record<string, unknown>, call);
          const res = h.response(answer.body).code(answer.status);
          for (const [name, value] of Object.entries(answer.headers)) res.header(name, value);
          return res;
        } finally {
          (request.app as { rateLimit?: unknown }).rateLimit = call.rateLimit;
        }
      },
    });
    serveDirectForm(server, '/form', 'test.form', async (call) => {
      calls.push(call);
      return formAnswer(call.form, call);
    });
    send = requestsOverSocket(server);
    installDirectForms(server, (a) => recorded.push(a), { proxies: [], answerError });
    await server.start();
  });
  after(() => server.stop());

  /** The same form, direct and through the route: both answers. */
  async function both(body: string, headers: Record<string, string> = FORM) {
    const id = { 'x-request-id': `req-${Math.random().toString(36).slice(2, 10)}` };
    const direct = await send('/form', { ...headers, ...id }, 'POST', body);
    const route = await send('/form?via=route', { ...headers, ...id }, 'POST', body);
    assert.equal(direct.viaHapi, false);
    assert.equal(route.viaHapi, true);
    return { direct, route };
  }

  it("a plain form POST is the handler's, answered as the route answers it, and recorded", async () => {
    const { direct, route } = await both('a=1&b=x+y&b=%C3%A9');
    assert.equal(direct.res.status, 200);
    assert.deepEqual(JSON.parse(direct.body.toString()), { form: { a: '1', b: ['x y', 'é'] } });
    assert.equal(direct.body.toString(), route.body.toString());
    assert.deepEqual(headersOf(direct.res), headersOf(route.res));
    for (const name of ['x-frame-options', 'x-content-type-options', 'referrer-policy', 'x-ratelimit-limit'])
      assert.ok(direct.res.headers.get(name), name);
    assert.equal(direct.res.headers.get('cache-control'), 'no-store');
    assert.equal(calls.at(-1)?.address, '127.0.0.1');
    const last = recorded.at(-1)!;
    assert.deepEqual(
      { routeId: last.routeId, method: last.method, path: last.path, status: last.status },
      { routeId: 'test.form', method: 'POST', path: '/form', status: 200 },
    );
  });

  it("the handler's status, a charset parameter, an empty form and a malformed request id, as the route", async () => {
    for (const [body, type] of [
      ['status=429', 'Application/X-WWW-Form-Urlencoded; charset=utf-8'],
      ['', 'application/x-www-form-urlencoded'],
    ]) {
      const { direct, route } = await both(body, { ...FORM, 'content-type': type });
      assert.equal(direct.res.status, route.res.status);
      assert.equal(direct.body.toString(), route.body.toString());
    }
    const bad = await send('/form', { ...FORM, 'x-request-id': 'bad id' }, 'POST', 'a=1');
    assert.match(bad.res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  it('an answer of 1 KiB or more is compressed as hapi compresses it, and varies on Accept-Encoding', async () => {
    for (const encoding of ['gzip', 'identity']) {
      const { direct, route } = await both('big=1', { ...FORM, 'accept-encoding': encoding });
      assert.deepEqual(headersOf(direct.res), headersOf(route.res));
      assert.equal(direct.res.headers.get('vary'), 'accept-encoding');
      assert.equal(direct.body.toString(), route.body.toString(), 'fetch decodes both');
    }
    const raw = await rawExchange(
      'POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nAccept-Encoding: gzip\r\nContent-Length: 5\r\n\r\nbig=1',
      true,
    );
    assert.match(raw.head, /content-encoding: gzip/i);
    assert.match(raw.head, /transfer-encoding: chunked/i);
    assert.match(gunzipSync(raw.chunked).toString(), /"pad":"x{2000}"/);
  });

  it("a failing handler is answered by the kernel's mapping, as the route's: generic 500, cause logged only", async () => {
    const { direct, route } = await both('fail=yes');
    assert.equal(direct.res.status, 500);
    assert.deepEqual(JSON.parse(direct.body.toString()), { oops: 'Internal server error' });
    assert.equal(direct.body.toString(), route.body.toString());
    assert.deepEqual(headersOf(direct.res), headersOf(route.res));
    assert.equal(direct.res.headers.get('x-ratelimit-limit'), '120');
    const failures = logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request failed');
    assert.equal(failures.length, 2);
    assert.deepEqual(
      failures.map((l) => [l.route, l.method, l.path.split('?')[0]]),
      [
        ['test.form', 'post', '/form'],
        ['test.form', 'post', '/form'],
      ],
    );
    assert.match(JSON.stringify(failures[0]), /handler failed/);
  });

  it('anything but a plain form of the path is left to the route', async () => {
    const cases: Array<[string, Record<string, string>, string?]> = [
      ['{"a":1}', { 'content-type': 'application/json' }],
      ['a=1', { ...FORM, 'content-encoding': 'identity' }],
      ['a=1', FORM, '/form/'],
      ['a=1', FORM, '/form?x=1'],
    ];
    for (const [body, headers, url] of cases) {
      const before = calls.length;
      const { viaHapi } = await send(url ?? '/form', headers, 'POST', body);
      assert.equal(viaHapi, true, JSON.stringify([headers, url]));
      assert.equal(calls.length, before);
    }
    const big = await send('/form', FORM, 'POST', `a=${'x'.repeat(100)}`);
    assert.equal(big.viaHapi, true);
    assert.equal(big.res.status, 413);
    for (const request of [
      'POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\na=1',
      'POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n3\r\na=1\r\n0\r\n\r\n',
    ]) {
      const before = calls.length;
      assert.match((await rawExchange(request)).text, /"form":\{"a":"1"\}/);
      assert.equal(calls.length, before);
    }
  });

  it("a body late past the route's timeout is read to its end, then answered 408 as the route answers it", async () => {
    const before = calls.length;
    const answers = await Promise.all(
      ['/form', '/form?via=route'].map((path) =>
        rawExchange(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nX-Request-Id: late-request-0001\r\nContent-Length: 7\r\n\r\na=1`,
          false,
          { after: 600, bytes: '&b=2' },
        ),
      ),
    );
    assert.equal(calls.length, before, 'the handler never sees a late body');
    const [direct, route] = answers.map((a) => ({
      status: a.head.split('\r\n')[0],
      headers: a.head
        .split('\r\n')
        .slice(1)
        .filter((l) => !/^(date|connection|keep-alive):/i.test(l))
        .map((l) => l.toLowerCase())
        .sort(),
      body: a.text.slice(a.text.indexOf('\r\n\r\n') + 4),
    }));
    assert.equal(direct.status, 'HTTP/1.1 408 Request Timeout');
    assert.deepEqual(direct, route);
    assert.equal(direct.body, '{"oops":"Request Time-out"}');
  });

  it('a client gone before the answer is recorded as hapi records it (499)', async () => {
    await new Promise<void>((resolve) => {
      const socket = net.connect(server.info.port as number, '127.0.0.1', () => {
        socket.write(
          'POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 9\r\n\r\na=1',
        );
        setTimeout(() => socket.destroy(), 50);
        setTimeout(resolve, 150);
      });
    });
    assert.equal(recorded.at(-1)?.status, 499);
    assert.equal(hapiStatuses.includes(499), false, 'hapi saw none of it');
  });

  it('a form in flight when the server stops is answered before its connection closes', async () => {
    const exchange = rawExchange(
      'POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\na=1',
      false,
      { after: 150, bytes: '&b=2' },
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stopped = server.stop({ timeout: 2000 });
    const answer = await exchange;
    await stopped;
    assert.match(answer.head, /^HTTP\/1.1 200 OK/);
    assert.match(answer.text, /"form":\{"a":"1","b":"2"\}/);
  });

  /**
   * Writes raw bytes (and `more` after a pause) and collects what comes back until an answer's
   * body is complete, the server closes, or 3 s pass; `chunks` gathers a chunked body's data.
   */
  function rawExchange(request: string, chunks = false, more?: { after: number; bytes: string }) {
    return new Promise<{ text: string; head: string; chunked: Buffer }>((resolve) => {
      const socket = net.connect(server.info.port as number, '127.0.0.1', () => {
        socket.write(request);
        if (more) setTimeout(() => socket.write(more.bytes), more.after);
      });
      let data = Buffer.alloc(0);
      const done = () => {
        clearTimeout(timer);
        socket.destroy();
        const text = data.toString('latin1');
        const split = text.indexOf('\r\n\r\n');
        const head = split < 0 ? text : text.slice(0, split);
        resolve({ text, head, chunked: dechunk(data.subarray(split + 4)) });
      };
      const timer = setTimeout(done, 3000);
      socket.on('data', (chunk) => {
        data = Buffer.concat([data, chunk]);
        const text = data.toString('latin1');
        if (chunks ? text.endsWith('0\r\n\r\n') : /\r\n\r\n[\s\S]*\}$/.test(text)) done();
      });
      socket.on('close', done);
      socket.on('error', done);
    });
  }
});

/** The data of a chunked body. */
function dechunk(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = Number.parseInt(raw.subarray(at, eol).toString(), 16);
    if (!size) break;
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}
