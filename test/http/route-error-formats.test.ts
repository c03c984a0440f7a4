import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** Errors the kernel raises before a handler runs still speak the route's own wire format. */
describe('route error formats', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  it('the token endpoint answers an oversized body in RFC 6749 form, not the envelope', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: form,
      payload: `grant_type=refresh_token&refresh_token=${'x'.repeat(20_000)}`,
    });
    assert.equal(res.statusCode, 413);
    const body = JSON.parse(res.payload);
    assert.equal(body.error, 'invalid_request');
    assert.equal(typeof body.error_description, 'string');
    assert.equal(body.data, undefined);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.ok(res.headers['x-request-id']);
  });

  it('a rate-limited token request is a 429 in RFC 6749 form with Retry-After', async () => {
    let res;
    for (let i = 0; i < 121; i++)
      res = await t.inject({ method: 'POST', url: '/api/v1/oauth/revoke', headers: form, payload: 'token=x' });
    assert.equal(res!.statusCode, 429);
    assert.equal(JSON.parse(res!.payload).error, 'invalid_request');
    assert.ok(Number(res!.headers['retry-after']) >= 1);
    assert.equal(res!.headers['x-ratelimit-remaining'], '0');
  });

  it('an HTML form that is refused answers a page, with the page headers', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/auth/magic',
      headers: { 'content-type': 'application/json' },
      payload: '{"token":"x"}',
    });
    assert.equal(res.statusCode, 415);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.payload, /<!doctype html>/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('JSON endpoints keep the envelope for the same errors', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(JSON.parse(res.payload).error.code, 'VALIDATION_FAILED');
  });
});
