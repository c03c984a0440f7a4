import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestApp } from '../helpers/app.js';
import { withJson, type JsonResponse } from '../helpers/json-inject.js';
import { linkCookieOf } from '../helpers/connector-links.js';
import { makeTeam } from '../helpers/factories.js';
import { startProtectedMcp, type ProtectedMcp } from '../helpers/mcp-protected.js';
import { ManualClock } from '../../src/lib/clock.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;

describe('mcp-generic instances on OAuth-protected MCP servers (shared mode)', () => {
  let t: App;
  let server: ProtectedMcp;
  const clock = new ManualClock('2026-04-01T10:00:00Z');
  before(async () => {
    server = await startProtectedMcp([{ name: 'echo', inputSchema: { type: 'object' } }]);
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' }, clock }));
  });
  after(async () => {
    await t.close();
    await server.close();
  });

  async function protectedInstance() {
    const team = await makeTeam(t.app, []);
    const h = team.owner.headers;
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: 'mcp-generic', displayName: 'Remote', config: { url: server.url } },
      })
    ).json().data;
    return { ...team, h, inst };
  }
  const initiate = (h: Record<string, string>, id: string, payload?: Record<string, unknown>) =>
    t.inject({
      method: 'POST',
      url: `${C}/instances/${id}/oauth/initiate`,
      headers: h,
      ...(payload ? { payload } : {}),
    });
  /** Follows the authorization URL as the browser that initiated would, then Gantry's callback. */
  async function authorize(started: JsonResponse) {
    const answer = await fetch(started.json().data.redirectUrl, { redirect: 'manual' });
    const back = new URL(String(answer.headers.get('location')));
    const res = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
    return { res, back, location: new URL(String(res.headers.location)) };
  }
  const getInstance = async (h: Record<string, string>, id: string) =>
    (await t.inject({ method: 'GET', url: `${C}/instances/${id}`, headers: h })).json().data;

  it('a 401 on sync or test moves the instance to pending_auth with a message', async () => {
    const { h, inst } = await protectedInstance();
    const sync = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
    assert.equal(sync.statusCode, 409, sync.body);
    assert.match(sync.json().error.message, /requires authorization/);
    let fresh = await getInstance(h, inst.id);
    assert.equal(fresh.status, 'pending_auth');
    assert.match(fresh.healthMessage, /requires authorization/);
    const test = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h });
    assert.equal(test.json().data.healthy, false);
    fresh = await getInstance(h, inst.id);
    assert.equal(fresh.status, 'pending_auth');
  });

  it('links by dynamic registration: PKCE S256, resource, iss; tokens sealed; sync and invoke send the token', async () => {
    const { h, inst } = await protectedInstance();
    const started = await initiate(h, inst.id);
    assert.equal(started.statusCode, 200, started.body);
    const { redirectUrl, state } = started.json().data;
    const url = new URL(redirectUrl);
    assert.equal(url.origin + url.pathname, `${server.base}/authorize`);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('resource'), server.url);
    assert.equal(url.searchParams.get('scope'), 'tools');
    assert.equal(url.searchParams.get('state'), state);
    assert.equal(
      url.searchParams.get('redirect_uri'),
      'http://127.0.0.1:8080/api/v1/connectors/oauth/mcp-generic/callback',
    );
    const registration = server.registrations.at(-1)!;
    assert.deepEqual(registration.redirect_uris, [url.searchParams.get('redirect_uri')]);
    assert.equal(registration.token_endpoint_auth_method, 'client_secret_basic');
    const { res, location } = await authorize(started);
    assert.equal(res.statusCode, 302);
    assert.equal(location.searchParams.get('status'), 'success', location.href);
    const exchange = server.tokenRequests.at(-1)!;
    assert.equal(exchange.form.grant_type, 'authorization_code');
    assert.equal(exchange.form.resource, server.url);
    assert.match(String(exchange.authorization), /^Basic /);
    assert.equal((await getInstance(h, inst.id)).status, 'active');

    const synced = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
    assert.equal(synced.statusCode, 200, synced.body);
    const tool = synced.json().data.find((x: { toolKey: string }) => x.toolKey === 'echo');
    const token = server.mcpTokens.at(-1)!;
    assert.ok(server.validAccess.has(token));
    const called = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
      headers: h,
      payload: { input: { x: 1 } },
    });
    assert.equal(called.statusCode, 200, called.body);
    assert.deepEqual(server.inner.calls.at(-1), { name: 'echo', args: { x: 1 } });
    assert.equal(server.mcpTokens.at(-1), token);

    // Nothing secret in plain text in the database files or the logs.
    const secrets = [
      token,
      ...[...server.validRefresh],
      ...[...server.clients.values()].map((c) => c.secret).filter((s): s is string => s !== null),
      exchange.form.code,
    ];
    const files = readdirSync(t.dataDir).map((f) => readFileSync(path.join(t.dataDir, f)).toString('latin1'));
    for (const secret of secrets) {
      for (const file of files) assert.ok(!file.includes(secret), 'a secret is stored in plain text');
      assert.ok(!t.logs.some((l) => l.includes(secret)), 'a secret is logged');
    }

    // The refresh job refreshes with `resource`, as the registered client; calls then use the new token.
    // Due within the horizon (the clock stays: the members' own sessions would expire).
    const run = await t.app.services.connectors.oauth.refreshDue(clock.now(), 2 * 3600_000);
    assert.equal(run.failed, 0);
    assert.ok(run.refreshed >= 1);
    const refresh = server.tokenRequests.at(-1)!;
    assert.equal(refresh.form.grant_type, 'refresh_token');
    assert.equal(refresh.form.resource, server.url);
    const again = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
      headers: h,
      payload: { input: { x: 2 } },
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.notEqual(server.mcpTokens.at(-1), token);
  });

  it('a refresh the server refuses moves the instance to error', async () => {
    const { h, inst } = await protectedInstance();
    await authorize(await initiate(h, inst.id));
    server.validRefresh.clear();
    const run = await t.app.services.connectors.oauth.refreshDue(clock.now(), 2 * 3600_000);
    assert.ok(run.failed >= 1);
    const fresh = await getInstance(h, inst.id);
    assert.equal(fresh.status, 'error');
    assert.match(fresh.healthMessage, /refresh failed/);
  });

  it('links with a pre-registered client (client_secret_post) given in the initiate body', async () => {
    server.clients.set('pre-client', { secret: 'pre-secret' });
    const { h, inst } = await protectedInstance();
    const before = server.registrations.length;
    const started = await initiate(h, inst.id, {
      clientId: 'pre-client',
      clientSecret: 'pre-secret',
      tokenEndpointAuthMethod: 'client_secret_post',
      scopes: ['tools', 'extra'],
    });
    assert.equal(started.statusCode, 200, started.body);
    const url = new URL(started.json().data.redirectUrl);
    assert.equal(server.registrations.length, before);
    assert.equal(url.searchParams.get('client_id'), 'pre-client');
    assert.equal(url.searchParams.get('scope'), 'tools extra');
    const { location } = await authorize(started);
    assert.equal(location.searchParams.get('status'), 'success', location.href);
    const exchange = server.tokenRequests.at(-1)!;
    assert.equal(exchange.form.client_secret, 'pre-secret');
    assert.equal(exchange.authorization, null);
    assert.equal((await getInstance(h, inst.id)).status, 'active');
    const files = readdirSync(t.dataDir).map((f) => readFileSync(path.join(t.dataDir, f)).toString('latin1'));
    assert.ok(!files.some((f) => f.includes('pre-secret')));
  });

  it('refuses a replayed, unknown or foreign state', async () => {
    const { h, inst } = await protectedInstance();
    const { back, location } = await authorize(await initiate(h, inst.id));
    assert.equal(location.searchParams.get('status'), 'success');
    const replay = await t.inject({ method: 'GET', url: back.pathname + back.search });
    assert.equal(new URL(String(replay.headers.location)).searchParams.get('reason'), 'state_already_used');
    const unknown = await t.inject({ method: 'GET', url: `${C}/oauth/mcp-generic/callback?code=x&state=nope` });
    assert.equal(new URL(String(unknown.headers.location)).searchParams.get('reason'), 'invalid_state');
    const other = await initiate(h, inst.id);
    const otherState = other.json().data.state;
    const foreign = await t.inject({ method: 'GET', url: `${C}/oauth/github/callback?code=x&state=${otherState}` });
    assert.equal(new URL(String(foreign.headers.location)).searchParams.get('reason'), 'invalid_state');
  });

  it('refuses a callback whose iss is not the authorization server (RFC 9207) without redeeming the code', async () => {
    const { h, inst } = await protectedInstance();
    const started = await initiate(h, inst.id);
    const answer = await fetch(started.json().data.redirectUrl, { redirect: 'manual' });
    const back = new URL(String(answer.headers.get('location')));
    back.searchParams.set('iss', 'https://attacker.example');
    const requests = server.tokenRequests.length;
    const res = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
    const location = new URL(String(res.headers.location));
    assert.equal(location.searchParams.get('status'), 'error');
    assert.equal(location.searchParams.get('reason'), 'token_exchange_failed');
    assert.equal(server.tokenRequests.length, requests);
    assert.equal((await getInstance(h, inst.id)).status, 'pending_auth');
  });

  it('refuses a callback after the url moved to another origin, without redeeming the code', async () => {
    const { h, inst } = await protectedInstance();
    const started = await initiate(h, inst.id);
    const answer = await fetch(started.json().data.redirectUrl, { redirect: 'manual' });
    const back = new URL(String(answer.headers.get('location')));
    const moved = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: h,
      payload: { config: { url: 'http://localhost:9/mcp' } },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    const requests = server.tokenRequests.length;
    const res = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
    assert.equal(new URL(String(res.headers.location)).searchParams.get('reason'), 'target_changed');
    assert.equal(server.tokenRequests.length, requests);
  });

  it('asks for a clientId when the authorization server allows no dynamic registration', async () => {
    server.noRegistration = true;
    try {
      const { h, inst } = await protectedInstance();
      const res = await initiate(h, inst.id);
      assert.equal(res.statusCode, 409, res.body);
      assert.match(res.json().error.message, /clientId/);
    } finally {
      server.noRegistration = false;
    }
  });
});

describe('a Client ID Metadata Document when Gantry is public over https', () => {
  it('publishes the document and uses its URL as client_id when the server supports it', async () => {
    const server = await startProtectedMcp([{ name: 'echo', inputSchema: { type: 'object' } }]);
    server.cimd = true;
    const t = withJson(
      await createTestApp({
        env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', GANTRY_PUBLIC_URL: 'https://gantry.example.com' },
      }),
    );
    try {
      const documentUrl = 'https://gantry.example.com/api/v1/connectors/oauth/client-metadata.json';
      const callbackUrl = 'https://gantry.example.com/api/v1/connectors/oauth/mcp-generic/callback';
      const doc = await t.inject({ method: 'GET', url: `${C}/oauth/client-metadata.json` });
      assert.equal(doc.statusCode, 200);
      assert.equal(doc.json().client_id, documentUrl);
      assert.deepEqual(doc.json().redirect_uris, [callbackUrl]);
      assert.equal(doc.json().token_endpoint_auth_method, 'none');
      const team = await makeTeam(t.app, []);
      const h = team.owner.headers;
      const inst = (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: h,
          payload: { connectorKey: 'mcp-generic', displayName: 'Remote', config: { url: server.url } },
        })
      ).json().data;
      const started = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/oauth/initiate`, headers: h });
      assert.equal(started.statusCode, 200, started.body);
      const url = new URL(started.json().data.redirectUrl);
      assert.equal(url.searchParams.get('client_id'), documentUrl);
      assert.equal(server.registrations.length, 0);
      const answer = await fetch(url, { redirect: 'manual' });
      const back = new URL(String(answer.headers.get('location')));
      assert.equal(back.origin + back.pathname, callbackUrl);
      const res = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
      assert.equal(new URL(String(res.headers.location)).searchParams.get('status'), 'success');
      const exchange = server.tokenRequests.at(-1)!;
      assert.equal(exchange.form.client_id, documentUrl);
      assert.equal(exchange.form.client_secret, undefined);
      assert.equal(exchange.authorization, null);
    } finally {
      await t.close();
      await server.close();
    }
  });
});

describe('MCP authorization discovery goes through the SSRF guard', () => {
  it('refuses discovery at a loopback address when private networks are not allowed', async () => {
    const server = await startProtectedMcp([]);
    const t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    const guarded = withJson(await createTestApp({ dataDir: t.dataDir }));
    try {
      const team = await makeTeam(t.app, []);
      const inst = (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: team.owner.headers,
          payload: { connectorKey: 'mcp-generic', displayName: 'Remote', config: { url: server.url } },
        })
      ).json().data;
      const seen = server.registrations.length;
      const res = await guarded.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/oauth/initiate`,
        headers: team.owner.headers,
      });
      assert.ok(res.statusCode >= 400 && res.statusCode < 600, res.body);
      assert.match(res.body, /internal address|loopback/);
      assert.equal(server.registrations.length, seen);
      assert.equal(server.authorizeRequests.length, 0);
    } finally {
      await guarded.close();
      await t.close();
      await server.close();
    }
  });
});
