import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Hapi, { type Server } from '@hapi/hapi';
import { registerBearerAuth, principalOf, type BearerVerifier, type Principal } from '../../src/http/auth.js';
import { registerResponses } from '../../src/http/responses.js';
import { createPageKit } from '../../src/http/pages.js';
import { reply } from '../../src/http/envelope.js';
import { createLogger } from '../../src/lib/logger.js';
import { systemClock } from '../../src/lib/clock.js';

const principal = (kind: Principal['kind'], scopes: string[] | null = null): Principal => ({
  userId: `u-${kind}`,
  kind,
  scopes,
  clientId: kind === 'oauth' ? 'c1' : null,
  sessionId: null,
  accountId: null,
  tokenId: 't',
});

/** Verifiers of several kinds, chained as the kernel chains the domains' verifiers. */
const verifiers: BearerVerifier[] = [
  {
    name: 'session',
    verify: async (t) => (t.startsWith('sess.') ? (t === 'sess.ok' ? principal('session') : null) : undefined),
  },
  {
    name: 'oauth',
    verify: async (t) =>
      t.startsWith('oauth.')
        ? principal(
            'oauth',
            t
              .slice(6)
              .split('+')
              .map((x) => x.replace('_', ':')),
          )
        : undefined,
  },
  { name: 'key', verify: async (t) => (t === 'key.ok' ? principal('api_key') : undefined) },
];

describe('bearer authentication: credential kinds and route rules', () => {
  let server: Server;
  before(async () => {
    server = Hapi.server();
    registerResponses(
      server,
      createLogger('silent'),
      systemClock,
      createPageKit({ name: 'Gantry', logoUrl: null }),
      () => undefined,
    );
    registerBearerAuth(server, verifiers);
    const handler = (request: Parameters<Hapi.Lifecycle.Method>[0], h: Parameters<Hapi.Lifecycle.Method>[1]) =>
      reply(request, h, { userId: principalOf(request).userId, kind: principalOf(request).kind });
    server.route([
      { method: 'GET', path: '/plain', handler },
      { method: 'GET', path: '/wallet', options: { plugins: { gantry: { scope: 'wallet:read' } } }, handler },
      { method: 'GET', path: '/account', options: { plugins: { gantry: { apiKeys: true } } }, handler },
      {
        method: 'GET',
        path: '/optional',
        options: { auth: { mode: 'optional' } },
        handler: (request, h) => reply(request, h, { signedIn: request.auth.credentials !== null }),
      },
    ]);
    await server.initialize();
  });
  after(() => server.stop());

  const get = (url: string, token?: string) =>
    server.inject({ url, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const code = (res: { payload: string }) =>
    (JSON.parse(res.payload) as { error: { code: string } | null }).error?.code;

  it('tells a missing token from a malformed Authorization header; optional routes treat a missing one as anonymous', async () => {
    const error = (res: { payload: string }) =>
      (JSON.parse(res.payload) as { error: { code: string; message: string } }).error;
    const missing = await server.inject({ url: '/plain' });
    assert.equal(missing.statusCode, 401);
    assert.deepEqual(error(missing), { code: 'UNAUTHORIZED', message: 'Missing authentication' });
    for (const authorization of ['Basic dXNlcjpwdw==', 'Bearer', 'Bearer a b']) {
      const malformed = await server.inject({ url: '/plain', headers: { authorization } });
      assert.equal(malformed.statusCode, 401, authorization);
      assert.deepEqual(
        error(malformed),
        { code: 'UNAUTHORIZED', message: 'Malformed Authorization header; expected "Bearer <token>"' },
        authorization,
      );
    }
    assert.deepEqual(JSON.parse((await server.inject({ url: '/optional' })).payload).data, { signedIn: false });
  });

  it('session tokens reach every endpoint', async () => {
    for (const url of ['/plain', '/wallet', '/account']) assert.equal((await get(url, 'sess.ok')).statusCode, 200, url);
  });

  it('a token its verifier refuses is 401 without asking the others', async () => {
    const res = await get('/plain', 'sess.revoked');
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /invalid_token/);
  });

  it('an unknown kind of token is 401', async () => {
    assert.equal((await get('/plain', 'something-else')).statusCode, 401);
  });

  it('OAuth tokens reach only what their scopes grant: 403 INSUFFICIENT_SCOPE elsewhere', async () => {
    assert.equal((await get('/wallet', 'oauth.wallet_read')).statusCode, 200);
    const wrong = await get('/wallet', 'oauth.email_read');
    assert.equal(wrong.statusCode, 403);
    assert.equal(code(wrong), 'INSUFFICIENT_SCOPE');
    assert.match(String(wrong.headers['www-authenticate']), /insufficient_scope.*wallet:read/);
    const plain = await get('/plain', 'oauth.wallet_read');
    assert.equal(plain.statusCode, 403);
    assert.equal(code(plain), 'INSUFFICIENT_SCOPE');
  });

  it('API keys reach only routes that accept them', async () => {
    assert.equal((await get('/account', 'key.ok')).statusCode, 200);
    const res = await get('/plain', 'key.ok');
    assert.equal(res.statusCode, 403);
    assert.equal(code(res), 'FORBIDDEN');
  });

  it('optional auth: anonymous passes, a bad token is still 401, an OAuth token without scope is 403', async () => {
    assert.deepEqual((JSON.parse((await get('/optional')).payload) as { data: unknown }).data, { signedIn: false });
    assert.deepEqual((JSON.parse((await get('/optional', 'sess.ok')).payload) as { data: unknown }).data, {
      signedIn: true,
    });
    assert.equal((await get('/optional', 'sess.revoked')).statusCode, 401);
    assert.equal((await get('/optional', 'oauth.wallet_read')).statusCode, 403);
  });
});
