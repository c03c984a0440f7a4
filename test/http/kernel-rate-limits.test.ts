import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signedInUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';

/** The Limits table rows (docs/interface.md) that the kernel serves (the sign-in API and the default). */
const ROWS: Array<{ method: 'GET' | 'POST'; path: string; limit: number; windowSec: number; auth?: boolean }> = [
  { method: 'POST', path: '/auth/register', limit: 10, windowSec: 300 },
  { method: 'POST', path: '/auth/login', limit: 8, windowSec: 60 },
  { method: 'POST', path: '/auth/resend-confirmation', limit: 5, windowSec: 300 },
  { method: 'POST', path: '/auth/confirm-email', limit: 5, windowSec: 300 },
  { method: 'POST', path: '/auth/forgot-password', limit: 3, windowSec: 300 },
  { method: 'POST', path: '/auth/reset-password', limit: 5, windowSec: 300 },
  { method: 'POST', path: '/auth/exchange-recovery-code', limit: 15, windowSec: 300 },
  { method: 'GET', path: '/auth/check-username', limit: 20, windowSec: 60 },
  { method: 'POST', path: '/auth/claim-username', limit: 5, windowSec: 60, auth: true },
  { method: 'POST', path: '/auth/change-email', limit: 10, windowSec: 60, auth: true },
  { method: 'POST', path: '/auth/change-password', limit: 10, windowSec: 60, auth: true },
  { method: 'GET', path: '/auth/me', limit: 120, windowSec: 60, auth: true },
];

describe('rate limits (docs/interface.md, Limits)', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00Z');
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  for (const [index, row] of ROWS.entries()) {
    it(`${row.method} ${row.path}: ${row.limit} per ${row.windowSec} s, 429 at ${row.limit + 1}, open again after the window`, async () => {
      const remoteAddress = `10.20.${index}.1`;
      const headers = row.auth ? (await signedInUser(t.app)).headers : {};
      // An invalid body is counted (the limiter runs before validation) and costs nothing.
      const call = () =>
        t.inject({
          method: row.method,
          url: `/api/v1${row.path}`,
          payload: row.method === 'POST' ? {} : undefined,
          headers,
          remoteAddress,
        });
      const started = clock.now().getTime();
      for (let i = 1; i <= row.limit; i++) {
        const res = await call();
        assert.notEqual(res.statusCode, 429, `call ${i}`);
        assert.equal(res.headers['x-ratelimit-limit'], String(row.limit));
        assert.equal(res.headers['x-ratelimit-remaining'], String(row.limit - i));
      }
      const refused = await call();
      assert.equal(refused.statusCode, 429);
      const body = JSON.parse(refused.payload) as {
        data: null;
        error: { code: string; message: string };
        meta: { requestId: string; durationMs: number };
      };
      assert.equal(body.data, null);
      assert.equal(body.error.code, 'RATE_LIMIT_EXCEEDED');
      assert.equal(refused.headers['x-request-id'], body.meta.requestId);
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.equal(refused.headers['x-ratelimit-reset'], String(Math.ceil((started + row.windowSec * 1000) / 1000)));
      assert.equal(refused.headers['retry-after'], String(row.windowSec));
      clock.advance(row.windowSec * 1000 - 1000);
      assert.equal((await call()).statusCode, 429);
      assert.equal((await call()).headers['retry-after'], '1');
      clock.advance(1000);
      const reopened = await call();
      assert.notEqual(reopened.statusCode, 429);
      assert.equal(reopened.headers['x-ratelimit-remaining'], String(row.limit - 1));
    });
  }

  it('counts a signed-in caller as themself wherever they connect from, and users apart', async () => {
    const a = await signedInUser(t.app);
    const b = await signedInUser(t.app);
    for (let i = 0; i < 5; i++)
      await t.inject({
        method: 'POST',
        url: '/api/v1/auth/claim-username',
        payload: {},
        headers: a.headers,
        remoteAddress: `10.30.0.${i}`,
      });
    const blocked = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/claim-username',
      payload: {},
      headers: a.headers,
      remoteAddress: '10.30.1.1',
    });
    assert.equal(blocked.statusCode, 429);
    const other = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/claim-username',
      payload: {},
      headers: b.headers,
      remoteAddress: '10.30.1.1',
    });
    assert.equal(other.statusCode, 400);
  });

  it('counts anonymous callers per IP, and each endpoint apart', async () => {
    for (let i = 0; i < 3; i++)
      await t.inject({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: {}, remoteAddress: '10.31.0.1' });
    assert.equal(
      (await t.inject({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: {}, remoteAddress: '10.31.0.1' }))
        .statusCode,
      429,
    );
    assert.equal(
      (await t.inject({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: {}, remoteAddress: '10.31.0.2' }))
        .statusCode,
      400,
    );
    assert.equal(
      (await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: {}, remoteAddress: '10.31.0.1' }))
        .statusCode,
      400,
    );
  });
});

describe('GANTRY_RATE_LIMIT_MULTIPLIER', () => {
  let t: TestApp;
  before(
    async () => (t = await createTestApp({ clock: new ManualClock(), env: { GANTRY_RATE_LIMIT_MULTIPLIER: '2.5' } })),
  );
  after(() => t.close());

  it('multiplies every limit (login: 8 x 2.5 = 20)', async () => {
    const call = () => t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: {}, remoteAddress: '10.40.0.1' });
    for (let i = 0; i < 20; i++) assert.equal((await call()).statusCode, 400);
    const refused = await call();
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['x-ratelimit-limit'], '20');
  });
});
