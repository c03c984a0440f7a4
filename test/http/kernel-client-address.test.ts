import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
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
import { ManualClock } from '../../src/lib/clock.js';

/** The request log line of one request id. */
function loggedIp(t: TestApp, requestId: string): unknown {
  const line = t.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === 'request' && l.requestId === requestId);
  return line?.ip;
}

const login = (t: TestApp, remoteAddress: string, forwardedFor?: string) =>
  t.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: {},
    remoteAddress,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });

describe('client address without trusted proxies (the default)', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp({ clock: new ManualClock('2026-05-01T00:00:00Z') })));
  after(() => t.close());

  it('a forged X-Forwarded-For is ignored: the peer is counted, whatever the header says', async () => {
    for (let i = 0; i < 8; i++) assert.equal((await login(t, '10.50.0.1', `203.0.113.${i}`)).statusCode, 400);
    const refused = await login(t, '10.50.0.1', '203.0.113.99');
    assert.equal(refused.statusCode, 429);
    assert.equal(JSON.parse(refused.payload).error.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(loggedIp(t, refused.headers['x-request-id'] as string), '10.50.0.1');
    // The address it claimed to be is untouched; another peer has its own budget.
    assert.equal((await login(t, '10.50.0.2', '10.50.0.1')).statusCode, 400);
  });
});

describe('client address behind trusted proxies (GANTRY_TRUSTED_PROXIES)', () => {
  let t: TestApp;
  const PROXY = '10.60.0.1';
  before(
    async () =>
      (t = await createTestApp({
        clock: new ManualClock('2026-05-01T00:00:00Z'),
        env: { GANTRY_TRUSTED_PROXIES: '10.60.0.0/16, fd00::/8' },
      })),
  );
  after(() => t.close());

  it('callers behind the proxy are counted apart, by the address the proxy forwarded', async () => {
    for (let i = 0; i < 8; i++) assert.equal((await login(t, PROXY, '203.0.113.10')).statusCode, 400);
    const refused = await login(t, PROXY, '203.0.113.10');
    assert.equal(refused.statusCode, 429);
    assert.equal(loggedIp(t, refused.headers['x-request-id'] as string), '203.0.113.10');
    // Everyone else behind the same proxy still signs in.
    const other = await login(t, PROXY, '203.0.113.11');
    assert.equal(other.statusCode, 400);
    assert.equal(loggedIp(t, other.headers['x-request-id'] as string), '203.0.113.11');
    // Another trusted hop in between changes nothing: the rightmost untrusted hop is the client.
    assert.equal((await login(t, '10.60.9.9', '203.0.113.10, 10.60.0.1')).statusCode, 429);
  });

  it('a client cannot escape its budget by writing its own X-Forwarded-For entries through the proxy', async () => {
    for (let i = 0; i < 8; i++) await login(t, PROXY, `198.51.100.${i}, 203.0.113.20`);
    const refused = await login(t, PROXY, '198.51.100.200, 203.0.113.20');
    assert.equal(refused.statusCode, 429);
    assert.equal(loggedIp(t, refused.headers['x-request-id'] as string), '203.0.113.20');
  });

  it('an untrusted peer forging X-Forwarded-For is counted as itself and cannot drain the named address', async () => {
    for (let i = 0; i < 8; i++) await login(t, '192.0.2.50', '203.0.113.30');
    const refused = await login(t, '192.0.2.50', '203.0.113.31');
    assert.equal(refused.statusCode, 429);
    assert.equal(loggedIp(t, refused.headers['x-request-id'] as string), '192.0.2.50');
    assert.equal((await login(t, PROXY, '203.0.113.30')).statusCode, 400);
  });

  it('IPv6: a trusted proxy forwarding an IPv6 client; all hops trusted: the leftmost', async () => {
    const v6 = await login(t, 'fd00::1', '2001:db8::5');
    assert.equal(loggedIp(t, v6.headers['x-request-id'] as string), '2001:db8::5');
    const internal = await login(t, PROXY, '10.60.7.7, fd00::2');
    assert.equal(loggedIp(t, internal.headers['x-request-id'] as string), '10.60.7.7');
  });

  it('the sign-in form of the authorize page spends the forwarded client address budget', async () => {
    const user = await makeUser(t.app);
    const client = await makeClient(t);
    for (let i = 0; i < 8; i++)
      await t.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: user.email, password: 'wrong password!' },
        remoteAddress: PROXY,
        headers: { 'x-forwarded-for': '203.0.113.40' },
      });
    const submit = async (forwardedFor: string) => {
      const headers = { 'x-forwarded-for': forwardedFor };
      const page = await t.inject({
        method: 'GET',
        url: authorizeQuery(client.clientId, pkcePair().challenge),
        remoteAddress: PROXY,
        headers,
      });
      const cookies = cookiesFrom(page.headers['set-cookie'] as string[] | string | undefined);
      return t.inject({
        method: 'POST',
        url: AUTHORIZE,
        remoteAddress: PROXY,
        headers: { ...FORM_HEADERS, ...headers, cookie: cookieHeader(cookies) },
        payload: form({
          csrf: hiddenInput(page.payload, 'csrf')!,
          request_state: hiddenInput(page.payload, 'request_state')!,
          email: user.email,
          password: user.password,
        }),
      });
    };
    const blocked = await submit('203.0.113.40');
    assert.equal(blocked.statusCode, 429);
    assert.match(blocked.payload, /Too many attempts/);
    const signedIn = await submit('203.0.113.41');
    assert.equal(signedIn.statusCode, 303);
    assert.match(String(signedIn.headers['set-cookie']), /gantry_session=/);
  });
});
