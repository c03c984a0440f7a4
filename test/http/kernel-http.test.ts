import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Joi from 'joi';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, signedInUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { reply } from '../../src/http/envelope.js';
import { cursorQuery, offsetMeta, offsetQuery } from '../../src/http/pagination.js';
import { principalOf } from '../../src/http/auth.js';

interface Body {
  data: unknown;
  error: { code: string; message: string; details?: Array<{ field: string; message: string }> } | null;
  meta: { requestId: string; durationMs: number; [k: string]: unknown };
}
const parse = (res: { payload: string }) => JSON.parse(res.payload) as Body;

/** Every error kind answers the envelope with X-Request-Id equal to meta.requestId. */
function assertErrorEnvelope(
  res: { statusCode: number; payload: string; headers: Record<string, unknown> },
  status: number,
  code: string,
): Body {
  assert.equal(res.statusCode, status, res.payload);
  const body = parse(res);
  assert.equal(body.data, null);
  assert.equal(body.error!.code, code);
  assert.equal(typeof body.error!.message, 'string');
  assert.equal(typeof body.meta.durationMs, 'number');
  assert.equal(res.headers['x-request-id'], body.meta.requestId);
  return body;
}

describe('HTTP kernel', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-04-01T00:00:00Z');

  before(async () => {
    t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '1' } });
    // Routes that exercise the kernel the way a domain would (test-only).
    t.server.route([
      {
        method: 'GET',
        path: '/api/v1/kernel-test/items/{id}',
        options: { validate: { params: Joi.object({ id: Joi.string().guid() }) } },
        handler: (request, h) => reply(request, h, { id: request.params.id, userId: principalOf(request).userId }),
      },
      {
        method: 'POST',
        path: '/api/v1/kernel-test/echo',
        options: {
          auth: false,
          validate: {
            payload: Joi.object({ name: Joi.string().required(), count: Joi.number().integer().min(1).required() }),
          },
        },
        handler: (request, h) => reply(request, h, request.payload, { status: 201 }),
      },
      {
        method: 'GET',
        path: '/api/v1/kernel-test/boom',
        options: { auth: false },
        handler: () => {
          throw new Error('database password is hunter2 at /srv/secret/path');
        },
      },
      {
        method: 'POST',
        path: '/api/v1/kernel-test/duplicate',
        options: { auth: false },
        handler: async (request, h) => {
          // Two inserts of the same email: what a race past a service's own check looks like.
          const row = {
            id: crypto.randomUUID(),
            email: 'dup@example.test',
            email_verified_at: null,
            password_hash: null,
            full_name: null,
            username: null,
            avatar_url: null,
            created_at: '',
            updated_at: '',
          };
          await t.app.kernel.db
            .insertInto('users')
            .values(row)
            .onConflict((oc) => oc.doNothing())
            .execute();
          await t.app.kernel.db
            .insertInto('users')
            .values({ ...row, id: crypto.randomUUID() })
            .execute();
          return reply(request, h, {});
        },
      },
      {
        method: 'GET',
        path: '/api/v1/kernel-test/offset',
        options: { auth: false, validate: { query: Joi.object(offsetQuery()) } },
        handler: (request, h) => {
          const { limit, offset } = request.query as { limit: number; offset: number };
          return reply(request, h, [], { meta: offsetMeta(95, limit, offset) });
        },
      },
      {
        method: 'GET',
        path: '/api/v1/kernel-test/cursor',
        options: { auth: false, validate: { query: Joi.object(cursorQuery()) } },
        handler: (request, h) => {
          const { limit, cursor } = request.query as { limit: number; cursor?: string };
          const start = cursor ? t.app.kernel.cursors.decode<{ n: number }>('test-list', cursor).n : 0;
          const rows = Array.from({ length: Math.max(0, Math.min(limit + 1, 60 - start)) }, (_, i) => ({
            n: start + i + 1,
          }));
          const page = t.app.kernel.cursors.page('test-list', rows, limit, (r) => ({ n: r.n }));
          return reply(request, h, page.items, {
            meta: { limit, hasNextPage: page.hasNextPage, nextCursor: page.nextCursor },
          });
        },
      },
    ]);
  });
  after(() => t.close());

  describe('envelope and errors', () => {
    it('success: data, meta {requestId, durationMs}, error null, X-Request-Id', async () => {
      const res = await t.inject({ method: 'POST', url: '/api/v1/kernel-test/echo', payload: { name: 'x', count: 2 } });
      assert.equal(res.statusCode, 201);
      const body = parse(res);
      assert.deepEqual(body.data, { name: 'x', count: 2 });
      assert.equal(body.error, null);
      assert.match(body.meta.requestId, /^[0-9a-f-]{36}$/);
      assert.equal(res.headers['x-request-id'], body.meta.requestId);
    });

    it('keeps a well-formed inbound X-Request-Id and replaces a malformed one', async () => {
      const kept = await t.inject({ url: '/healthz', headers: { 'x-request-id': 'proxy-abc-12345' } });
      assert.equal(kept.headers['x-request-id'], 'proxy-abc-12345');
      const replaced = await t.inject({ url: '/healthz', headers: { 'x-request-id': 'bad id\nwith newline' } });
      assert.notEqual(replaced.headers['x-request-id'], 'bad id\nwith newline');
      assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });

    it('unknown route: 404 NOT_FOUND', async () => {
      assertErrorEnvelope(await t.inject('/api/v1/no/such/thing'), 404, 'NOT_FOUND');
    });

    it('known path, wrong method: 404 or 405, still the envelope', async () => {
      const res = await t.inject({ method: 'DELETE', url: '/api/v1/auth/login' });
      assert.ok([404, 405].includes(res.statusCode));
      assertErrorEnvelope(res, res.statusCode, res.statusCode === 405 ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND');
    });

    it('joi failure: 400 VALIDATION_FAILED with every failing field', async () => {
      const res = await t.inject({
        method: 'POST',
        url: '/api/v1/kernel-test/echo',
        payload: { count: 0, extra: true },
      });
      const body = assertErrorEnvelope(res, 400, 'VALIDATION_FAILED');
      assert.deepEqual(body.error!.details!.map((d) => d.field).sort(), ['count', 'extra', 'name']);
    });

    it('invalid query: 400 with the field', async () => {
      const body = assertErrorEnvelope(
        await t.inject('/api/v1/kernel-test/offset?limit=abc'),
        400,
        'VALIDATION_FAILED',
      );
      assert.equal(body.error!.details![0].field, 'limit');
    });

    it('malformed id in the path: 422 VALIDATION_FAILED', async () => {
      const { headers } = await signedInUser(t.app);
      const body = assertErrorEnvelope(
        await t.inject({ url: '/api/v1/kernel-test/items/not-a-uuid', headers }),
        422,
        'VALIDATION_FAILED',
      );
      assert.equal(body.error!.details![0].field, 'id');
      const ok = await t.inject({ url: '/api/v1/kernel-test/items/7b0c6a2e-0d55-4a43-9d8f-6d1e9a0b1c2d', headers });
      assert.equal(ok.statusCode, 200);
    });

    it('missing, malformed and forged bearer tokens: 401 UNAUTHORIZED', async () => {
      assertErrorEnvelope(await t.inject('/api/v1/auth/me'), 401, 'UNAUTHORIZED');
      assertErrorEnvelope(
        await t.inject({ url: '/api/v1/auth/me', headers: { authorization: 'Basic abc' } }),
        401,
        'UNAUTHORIZED',
      );
      const { token } = await signedInUser(t.app);
      const forged = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      const res = await t.inject({ url: '/api/v1/auth/me', headers: bearer(forged) });
      assertErrorEnvelope(res, 401, 'UNAUTHORIZED');
      assert.match(String(res.headers['www-authenticate']), /Bearer/);
    });

    it('oversized body: 413 PAYLOAD_TOO_LARGE', async () => {
      const res = await t.inject({
        method: 'POST',
        url: '/api/v1/kernel-test/echo',
        payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), count: 1 }),
        headers: { 'content-type': 'application/json' },
      });
      assertErrorEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('malformed JSON: 400; an unsupported content type: 415', async () => {
      const bad = await t.inject({
        method: 'POST',
        url: '/api/v1/kernel-test/echo',
        payload: '{"name": ',
        headers: { 'content-type': 'application/json' },
      });
      assertErrorEnvelope(bad, 400, 'VALIDATION_FAILED');
      const type = await t.inject({
        method: 'POST',
        url: '/api/v1/kernel-test/echo',
        payload: 'name=x',
        headers: { 'content-type': 'application/x-unknown' },
      });
      assertErrorEnvelope(type, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('unexpected exception: 500 INTERNAL without internals, logged with the request id', async () => {
      const res = await t.inject('/api/v1/kernel-test/boom');
      const body = assertErrorEnvelope(res, 500, 'INTERNAL');
      assert.doesNotMatch(res.payload, /hunter2|\/srv|Error:|at /);
      const logged = t.logs
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.level === 'error' && l.requestId === body.meta.requestId);
      assert.ok(logged, 'the failure is logged with its request id');
      assert.match(JSON.stringify(logged), /hunter2/);
    });

    it('a uniqueness race past the service is 409 CONFLICT, not 500', async () => {
      const body = assertErrorEnvelope(
        await t.inject({ method: 'POST', url: '/api/v1/kernel-test/duplicate' }),
        409,
        'CONFLICT',
      );
      assert.doesNotMatch(body.error!.message, /UNIQUE|users\.email/);
    });

    it('the request log line carries the path without the query string', async () => {
      await t.inject('/auth/confirm-email?token=SECRET-IN-QUERY-123456');
      const joined = t.logs.join('\n');
      assert.doesNotMatch(joined, /SECRET-IN-QUERY/);
      assert.match(joined, /"path":"\/auth\/confirm-email"/);
    });
  });

  describe('health', () => {
    it('/healthz and /readyz answer in the envelope, without rate-limit headers', async () => {
      const live = await t.inject('/healthz');
      assert.deepEqual(parse(live).data, { status: 'ok' });
      const ready = await t.inject('/readyz');
      assert.equal(ready.statusCode, 200);
      assert.deepEqual(parse(ready).data, { status: 'ready' });
      assert.equal(ready.headers['x-ratelimit-limit'], undefined);
    });

    it('/readyz is 503 while draining', async () => {
      t.app.draining = true;
      try {
        const res = await t.inject('/readyz');
        assert.equal(res.statusCode, 503);
        assert.equal(parse(res).error!.code, 'NOT_CONFIGURED');
      } finally {
        t.app.draining = false;
      }
    });
  });

  describe('pagination', () => {
    it('offset: defaults, meta fields, hasNextPage, and out-of-range limit/offset are 400 (never clamped)', async () => {
      const first = parse(await t.inject('/api/v1/kernel-test/offset'));
      assert.deepEqual(
        { ...first.meta, requestId: undefined, durationMs: undefined },
        { requestId: undefined, durationMs: undefined, total: 95, limit: 20, offset: 0, hasNextPage: true },
      );
      const last = parse(await t.inject('/api/v1/kernel-test/offset?limit=50&offset=50'));
      assert.equal(last.meta.hasNextPage, false);
      for (const q of ['limit=0', 'limit=51', 'offset=-1', 'limit=1.5']) {
        assertErrorEnvelope(await t.inject(`/api/v1/kernel-test/offset?${q}`), 400, 'VALIDATION_FAILED');
      }
    });

    it('cursor: the first page already carries nextCursor; walking ends with hasNextPage false; forged cursors are 400', async () => {
      let url = '/api/v1/kernel-test/cursor?limit=25';
      const seen: number[] = [];
      let pages = 0;
      for (;;) {
        const body = parse(await t.inject(url));
        pages++;
        seen.push(...(body.data as Array<{ n: number }>).map((r) => r.n));
        assert.equal(body.meta.limit, 25);
        if (!body.meta.hasNextPage) {
          assert.equal(body.meta.nextCursor, null);
          break;
        }
        assert.equal(typeof body.meta.nextCursor, 'string');
        url = `/api/v1/kernel-test/cursor?limit=25&cursor=${encodeURIComponent(String(body.meta.nextCursor))}`;
      }
      assert.equal(pages, 3);
      assert.deepEqual(
        seen,
        Array.from({ length: 60 }, (_, i) => i + 1),
      );

      const good = t.app.kernel.cursors.encode('test-list', { n: 10 });
      const [payload, mac] = good.split('.');
      const tampered = `${Buffer.from(JSON.stringify({ n: 0 })).toString('base64url')}.${mac}`;
      const foreign = t.app.kernel.cursors.encode('another-list', { n: 10 });
      for (const cursor of [tampered, foreign, 'garbage', `${payload}.${mac}.x`, `${payload}.`]) {
        const body = assertErrorEnvelope(
          await t.inject(`/api/v1/kernel-test/cursor?cursor=${encodeURIComponent(cursor)}`),
          400,
          'VALIDATION_FAILED',
        );
        assert.equal(body.error!.details![0].field, 'cursor');
      }
      assertErrorEnvelope(await t.inject('/api/v1/kernel-test/cursor?limit=0'), 400, 'VALIDATION_FAILED');
    });
  });
});
