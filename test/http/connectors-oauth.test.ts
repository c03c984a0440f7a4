import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, TEST_ENV } from '../helpers/app.js';
import { testEnvFor } from '../helpers/postgres.js';
import { createAppContext } from '../../src/app.js';
import { resolveConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { startFakeProvider, providerEnv, type FakeProvider } from '../helpers/oauth-provider.js';
import { ManualClock } from '../../src/lib/clock.js';
import { openCredentials } from '../../src/connectors/credentials.js';
import { refreshHorizonMs } from '../../src/connectors/jobs.js';
import { linkCookieOf } from '../helpers/connector-links.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;

describe('OAuth linking and the refresh job', () => {
  let t: App;
  let provider: FakeProvider;
  const clock = new ManualClock('2026-04-01T10:00:00Z');
  before(async () => {
    provider = await startFakeProvider();
    t = withJson(await createTestApp({ env: providerEnv(provider.base), clock }));
  });
  after(async () => {
    await t.close();
    await provider.close();
  });

  async function linkable() {
    const team = await makeTeam(t.app, ['viewer']);
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: team.owner.headers,
        payload: { connectorKey: 'github', displayName: 'GitHub' },
      })
    ).json().data;
    return { ...team, h: team.owner.headers, inst };
  }
  // Each link is finished by the browser that started it: its cookie, by state.
  const browsers = new Map<string, { cookie: string }>();
  async function initiate(h: Record<string, string>, id: string) {
    const res = await t.inject({ method: 'POST', url: `${C}/instances/${id}/oauth/initiate`, headers: h });
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data as { redirectUrl: string; state: string };
    browsers.set(data.state, linkCookieOf(res));
    return data;
  }
  const callback = (query: Record<string, string>, key = 'github') =>
    t.inject({
      method: 'GET',
      url: `${C}/oauth/${key}/callback?${new URLSearchParams(query)}`,
      headers: browsers.get(query.state) ?? {},
    });
  const location = (res: { headers: Record<string, unknown> }) => new URL(String(res.headers.location));

  it('links: PKCE S256, code exchanged, tokens sealed, pending_auth -> active, 302 to the web settings page', async () => {
    const { h, inst } = await linkable();
    const { redirectUrl, state } = await initiate(h, inst.id);
    const url = new URL(redirectUrl);
    assert.equal(url.origin + url.pathname, `${provider.base}/authorize`);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('state'), state);
    assert.equal(url.searchParams.get('redirect_uri'), 'http://127.0.0.1:8080/api/v1/connectors/oauth/github/callback');
    const code = provider.issueCode(url.searchParams.get('code_challenge'));
    const res = await callback({ code, state });
    assert.equal(res.statusCode, 302);
    const loc = location(res);
    assert.equal(`${loc.origin}${loc.pathname}`, 'https://app.example.test/settings/connectors');
    assert.deepEqual(Object.fromEntries(loc.searchParams), {
      connector: 'github',
      instanceId: inst.id,
      status: 'success',
    });
    const got = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data;
    assert.equal(got.status, 'active');
    const status = (
      await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/credentials/status`, headers: h })
    ).json().data;
    assert.deepEqual(status, {
      configured: true,
      credType: 'oauth2',
      expiresAt: '2026-04-01T11:00:00.000Z',
      scopes: ['repo', 'read:user'],
    });
    const row = await t.app.kernel.db
      .selectFrom('connector_credentials')
      .selectAll()
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    const values = openCredentials(t.app.kernel.secrets, inst.id, 'oauth2', row.sealed_value);
    assert.ok(provider.validAccess.has(values.access_token));
    assert.ok(!row.sealed_value.includes(values.access_token));
    // Health test calls the check URL with the token.
    const test = (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h })).json().data;
    assert.equal(test.healthy, true, test.message);
    // Replaying the state: error redirect, nothing changes.
    const before = provider.tokenRequests.length;
    const replay = await callback({ code: provider.issueCode(null), state });
    assert.deepEqual(Object.fromEntries(location(replay).searchParams), {
      connector: 'github',
      instanceId: inst.id,
      status: 'error',
      reason: 'state_already_used',
    });
    assert.equal(provider.tokenRequests.length, before);
    const after1 = await t.app.kernel.db
      .selectFrom('connector_credentials')
      .select('sealed_value')
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    assert.equal(after1.sealed_value, row.sealed_value);
    // The provider stops accepting the token: the check URL fails, the test reports it, status error.
    provider.validAccess.delete(values.access_token);
    const failing = (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h })).json().data;
    assert.equal(failing.healthy, false);
    assert.match(failing.message, /401/);
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data.status,
      'error',
    );
  });

  it('refuses expired, unknown, foreign-connector and wrong-user states without changing anything', async () => {
    const { h, inst, account, owner } = await linkable();
    const expired = await initiate(h, inst.id);
    clock.advance(10 * 60_000 + 1);
    const res = await callback({ code: provider.issueCode(null), state: expired.state });
    assert.equal(location(res).searchParams.get('reason'), 'state_expired');
    const unknown = await callback({ code: 'x', state: 'forged-state' });
    assert.equal(location(unknown).searchParams.get('reason'), 'invalid_state');
    assert.equal(location(unknown).origin, 'https://app.example.test');
    const denied = await initiate(h, inst.id);
    const deniedRes = await callback({ state: denied.state, error: 'access_denied' });
    assert.equal(location(deniedRes).searchParams.get('reason'), 'provider_denied');
    const other = await initiate(h, inst.id);
    const foreign = await callback({ code: 'x', state: other.state }, 'google');
    assert.equal(location(foreign).searchParams.get('reason'), 'invalid_state');
    // The state is bound to its user: once they lose access, the callback refuses it.
    const bound = await initiate(h, inst.id);
    await t.app.kernel.db
      .updateTable('account_members')
      .set({ role: 'viewer' })
      .where('account_id', '=', account.id)
      .where('user_id', '=', owner.user.id)
      .execute();
    const wrong = await callback({ code: provider.issueCode(null), state: bound.state });
    assert.equal(location(wrong).searchParams.get('reason'), 'access_revoked');
    await t.app.kernel.db
      .updateTable('account_members')
      .set({ role: 'owner' })
      .where('account_id', '=', account.id)
      .where('user_id', '=', owner.user.id)
      .execute();
    const got = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data;
    assert.equal(got.status, 'pending_auth');
    // Expired states are pruned a day after they expire.
    const countStates = async () =>
      (
        await t.app.kernel.db
          .selectFrom('connector_oauth_states')
          .select('state_hash')
          .where('instance_id', '=', inst.id)
          .execute()
      ).length;
    const beforePrune = await countStates();
    assert.equal(await t.app.services.connectors.oauth.pruneStates(clock.now()), 0);
    assert.equal(
      (await t.app.services.connectors.oauth.pruneStates(new Date(clock.now().getTime() + 25 * 3_600_000))) >=
        beforePrune,
      true,
    );
    assert.equal(await countStates(), 0);
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/credentials/status`, headers: h })).json().data
        .configured,
      false,
    );
    // A viewer cannot start a link; another workspace cannot see the instance; a malformed
    // connector key is a 400, never a redirect elsewhere.
    const { members } = await linkable();
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: `${C}/instances/${inst.id}/oauth/initiate`,
          headers: members.viewer.headers,
        })
      ).statusCode,
      403,
    );
    const stranger = await linkable();
    assert.equal(
      (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/oauth/initiate`, headers: stranger.h }))
        .statusCode,
      404,
    );
    const evil = await t.inject({
      method: 'GET',
      url: `${C}/oauth/${encodeURIComponent('//evil.example')}/callback?state=x`,
    });
    assert.notEqual(evil.statusCode, 302);
  });

  it('the settings page states the outcome', async () => {
    const ok = await t.inject({ method: 'GET', url: '/settings/connectors?connector=github&status=success' });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.body, /github is connected/);
    const bad = await t.inject({
      method: 'GET',
      url: '/settings/connectors?connector=%3Cscript%3E&status=error&reason=state_expired',
    });
    assert.match(bad.body, /expired/);
    assert.ok(!bad.body.includes('<script>'));
  });

  it('refreshes due tokens once, stores rotated refresh tokens, and on failure errors the instance and notifies its creator', async () => {
    clock.set('2026-05-01T00:00:00Z');
    // Only this test's credentials (earlier tests linked others).
    await t.app.kernel.db.deleteFrom('connector_credentials').execute();
    const linked: Array<{ inst: { id: string }; h: Record<string, string>; userId: string }> = [];
    for (let i = 0; i < 3; i++) {
      const { h, inst, owner } = await linkable();
      const { redirectUrl, state } = await initiate(h, inst.id);
      await callback({ code: provider.issueCode(new URL(redirectUrl).searchParams.get('code_challenge')), state });
      linked.push({ inst, h, userId: owner.user.id });
    }
    const sealedOf = async (id: string) =>
      await t.app.kernel.db
        .selectFrom('connector_credentials')
        .selectAll()
        .where('instance_id', '=', id)
        .executeTakeFirstOrThrow();
    const oldRefresh = openCredentials(
      t.app.kernel.secrets,
      linked[0].inst.id,
      'oauth2',
      (await sealedOf(linked[0].inst.id)).sealed_value,
    ).refresh_token;
    // Not due yet: nothing happens.
    const horizon = refreshHorizonMs('*/5 * * * *', clock.now());
    assert.equal(horizon, 6 * 60_000);
    assert.deepEqual(await t.app.services.connectors.oauth.refreshDue(clock.now(), horizon), {
      claimed: 0,
      refreshed: 0,
      failed: 0,
    });
    // The third's refresh token is revoked at the provider.
    provider.revoked.add(
      openCredentials(
        t.app.kernel.secrets,
        linked[2].inst.id,
        'oauth2',
        (await sealedOf(linked[2].inst.id)).sealed_value,
      ).refresh_token,
    );
    clock.advance(55 * 60_000);
    // Two processes (two connections on one database file) run the job at once: each
    // credential is refreshed exactly once.
    const env = await testEnvFor(t.dataDir, { ...TEST_ENV, ...providerEnv(provider.base) });
    const second = await createAppContext(resolveConfig({ dataDir: t.dataDir }, env), {
      clock,
      logger: createLogger('silent'),
      env,
    });
    const before = provider.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length;
    const [a, b] = await Promise.all([
      t.app.services.connectors.oauth.refreshDue(clock.now(), horizon),
      second.services.connectors.oauth.refreshDue(clock.now(), horizon),
    ]).finally(() => second.kernel.close());
    assert.equal(a.claimed + b.claimed, 3);
    assert.equal(a.refreshed + b.refreshed, 2);
    assert.equal(a.failed + b.failed, 1);
    assert.equal(provider.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length - before, 3);
    const first = await sealedOf(linked[0].inst.id);
    const fresh = openCredentials(t.app.kernel.secrets, linked[0].inst.id, 'oauth2', first.sealed_value);
    assert.notEqual(fresh.refresh_token, oldRefresh);
    assert.ok(provider.validRefresh.has(fresh.refresh_token));
    assert.equal(first.expires_at, new Date(clock.now().getTime() + 3600_000).toISOString());
    const failed = (
      await t.inject({ method: 'GET', url: `${C}/instances/${linked[2].inst.id}`, headers: linked[2].h })
    ).json().data;
    assert.equal(failed.status, 'error');
    assert.match(failed.healthMessage, /invalid_grant/);
    const notes = await t.app.kernel.db
      .selectFrom('notifications')
      .selectAll()
      .where('user_id', '=', linked[2].userId)
      .execute();
    assert.equal(notes.length, 1);
    assert.match(notes[0].title, /GitHub needs attention/);
    assert.equal(notes[0].priority, 'high');
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances/${linked[0].inst.id}`, headers: linked[0].h })).json().data
        .status,
      'active',
    );
    // Run again right away: nothing is due any more.
    assert.equal((await t.app.services.connectors.oauth.refreshDue(clock.now(), horizon)).claimed, 0);
    // Past the lease, the instance in error is not retried: its token already failed.
    clock.advance(10 * 60_000);
    assert.equal((await t.app.services.connectors.oauth.refreshDue(clock.now(), horizon)).failed, 0);
    // Re-initiating the OAuth flow is how it recovers: error -> active, message cleared.
    const signedIn = {
      authorization: `Bearer ${(await t.app.services.identity.sessions.start(linked[2].userId)).accessToken}`,
    };
    const { redirectUrl, state } = await initiate(signedIn, linked[2].inst.id);
    const code = provider.issueCode(new URL(redirectUrl).searchParams.get('code_challenge'));
    assert.equal(Object.fromEntries(location(await callback({ code, state })).searchParams).status, 'success');
    const recovered = (
      await t.inject({ method: 'GET', url: `${C}/instances/${linked[2].inst.id}`, headers: signedIn })
    ).json().data;
    assert.equal(recovered.status, 'active');
    assert.equal(recovered.healthMessage, null);
  });
});
