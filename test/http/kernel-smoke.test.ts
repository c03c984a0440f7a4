import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signedInUser } from '../helpers/factories.js';

describe('kernel smoke', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('answers health in the envelope with a request id', async () => {
    const res = await t.inject('/healthz');
    assert.equal(res.statusCode, 200);
    const body = res.result as { data: unknown; meta: { requestId: string }; error: null };
    assert.deepEqual(body.data, { status: 'ok' });
    assert.equal(body.error, null);
    assert.equal(res.headers['x-request-id'], body.meta.requestId);
  });

  it('signs in and reads the current user', async () => {
    const { user, headers } = await signedInUser(t.app);
    const res = await t.inject({ url: '/api/v1/auth/me', headers });
    assert.equal(res.statusCode, 200);
    assert.equal((res.result as { data: { id: string } }).data.id, user.id);
    assert.equal(res.headers['x-ratelimit-limit'], '120');
  });
});
