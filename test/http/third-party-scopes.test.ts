import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { AI_ENV, aiMember, configure, startFakes, userSays } from '../helpers/ai.js';
import type { FakeProvider } from '../helpers/fake-ai.js';
import {
  authorizeAndAllow,
  authorizeQuery,
  basic,
  form,
  FORM_HEADERS,
  makeClient,
  pkcePair,
  REDIRECT,
} from '../helpers/oauth.js';
import { TEST_PASSWORD } from '../helpers/factories.js';

/**
 * A third-party app's access token reaches exactly what its scopes grant (docs/interface.md, Authentication 8):
 * /oauth/userinfo, /wallet/me with wallet:read, /features/chat/runs with execution:run, and
 * gets 403 INSUFFICIENT_SCOPE on every other JWT endpoint, across every domain.
 */
describe('third-party access tokens across the domains', () => {
  let t: TestApp;
  let fakes: Record<'openai' | 'anthropic' | 'google', FakeProvider>;
  let member: Awaited<ReturnType<typeof aiMember>>;
  let client: Awaited<ReturnType<typeof makeClient>>;

  before(async () => {
    t = await createTestApp({ env: { ...AI_ENV, GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
    fakes = await startFakes();
    await configure(t.app, fakes.openai);
    member = await aiMember(t.app, { funds: 5 });
    client = await makeClient(t);
  });
  after(async () => {
    await Promise.all(Object.values(fakes).map((f) => f.close()));
    await t.close();
  });

  async function tokenFor(scope: string): Promise<string> {
    const { verifier, challenge } = pkcePair();
    const { location } = await authorizeAndAllow(
      t,
      authorizeQuery(client.clientId, challenge, { scope }),
      member.user.email,
      TEST_PASSWORD,
    );
    const code = location.searchParams.get('code');
    assert.ok(code, `no code in ${location}`);
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
      payload: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }),
    });
    assert.equal(res.statusCode, 200, res.payload);
    return JSON.parse(res.payload).access_token as string;
  }

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('execution:run starts a chat run (and is charged to the user) but reads no wallet', async () => {
    const token = await tokenFor('execution:run');
    const run = await t.inject({
      method: 'POST',
      url: '/api/v1/features/chat/runs',
      headers: bearer(token),
      payload: userSays('hello from a partner app'),
    });
    assert.equal(run.statusCode, 201, run.payload);
    const data = JSON.parse(run.payload).data;
    assert.equal(data.provider, 'openai');
    const wallet = await t.inject({ url: '/api/v1/wallet/me', headers: bearer(token) });
    assert.equal(wallet.statusCode, 403);
    assert.equal(JSON.parse(wallet.payload).error.code, 'INSUFFICIENT_SCOPE');
    const own = await t.app.services.wallet.get(member.user.id);
    assert.ok(own.balance < 5, 'the run was debited from the user wallet');
  });

  it('wallet:read reads the balance but cannot run', async () => {
    const token = await tokenFor('wallet:read');
    const wallet = await t.inject({ url: '/api/v1/wallet/me', headers: bearer(token) });
    assert.equal(wallet.statusCode, 200);
    assert.equal(JSON.parse(wallet.payload).data.currency, 'USD');
    const run = await t.inject({
      method: 'POST',
      url: '/api/v1/features/chat/runs',
      headers: bearer(token),
      payload: userSays('hi'),
    });
    assert.equal(run.statusCode, 403);
    assert.equal(JSON.parse(run.payload).error.code, 'INSUFFICIENT_SCOPE');
  });

  it('every other domain refuses a third-party token with 403 INSUFFICIENT_SCOPE', async () => {
    const token = await tokenFor('email:read profile:read execution:run wallet:read');
    const userinfo = await t.inject({ url: '/api/v1/oauth/userinfo', headers: bearer(token) });
    assert.equal(userinfo.statusCode, 200);
    assert.equal(JSON.parse(userinfo.payload).email, member.user.email);
    const elsewhere = [
      ['GET', '/api/v1/auth/me'],
      ['GET', '/api/v1/accounts/me'],
      ['GET', `/api/v1/accounts/${member.account.id}/members`],
      ['GET', '/api/v1/notifications'],
      ['GET', '/api/v1/notifications/unread-count'],
      ['GET', '/api/v1/connectors/instances'],
      ['GET', '/api/v1/ai/operations/rate-limit'],
      ['GET', '/api/v1/ai/operations/models/health'],
      ['GET', '/api/v1/oauth/grants'],
      ['POST', '/api/v1/accounts'],
    ] as const;
    for (const [method, url] of elsewhere) {
      const res = await t.inject({
        method,
        url,
        headers: bearer(token),
        payload: method === 'POST' ? { slug: 'nope-nope', legalName: 'Nope' } : undefined,
      });
      assert.equal(res.statusCode, 403, `${method} ${url}: ${res.payload}`);
      assert.equal(JSON.parse(res.payload).error.code, 'INSUFFICIENT_SCOPE', `${method} ${url}`);
    }
  });

  it('a revoked token stops at once on the chat run endpoint', async () => {
    const token = await tokenFor('execution:run');
    const revoke = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/revoke',
      headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
      payload: form({ token }),
    });
    assert.equal(revoke.statusCode, 200);
    const run = await t.inject({
      method: 'POST',
      url: '/api/v1/features/chat/runs',
      headers: bearer(token),
      payload: userSays('still there?'),
    });
    assert.equal(run.statusCode, 401);
  });
});
