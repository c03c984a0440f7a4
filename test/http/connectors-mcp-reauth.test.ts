import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { startProtectedMcp, type ProtectedMcp } from '../helpers/mcp-protected.js';
import { linkCookieOf } from '../helpers/connector-links.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;

describe('re-authorization when a linked MCP server refuses a call', () => {
  let t: App;
  let server: ProtectedMcp;
  before(async () => {
    server = await startProtectedMcp([{ name: 'echo', inputSchema: { type: 'object' } }]);
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
  });
  afterEach(() => {
    server.callScopes = null;
  });
  after(async () => {
    await t.close();
    await server.close();
  });

  const getInstance = async (h: Record<string, string>, id: string) =>
    (await t.inject({ method: 'GET', url: `${C}/instances/${id}`, headers: h })).json().data;

  /** Initiates and follows the authorization URL as a browser would; answers the URL's query. */
  async function link(h: Record<string, string>, id: string) {
    const started = await t.inject({ method: 'POST', url: `${C}/instances/${id}/oauth/initiate`, headers: h });
    assert.equal(started.statusCode, 200, started.body);
    const authorizeUrl = new URL(started.json().data.redirectUrl);
    const answer = await fetch(authorizeUrl, { redirect: 'manual' });
    const back = new URL(String(answer.headers.get('location')));
    const res = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
    assert.equal(new URL(String(res.headers.location)).searchParams.get('status'), 'success');
    return authorizeUrl.searchParams;
  }

  /** A linked instance with its tool synced. */
  async function linkedTool() {
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
    await link(h, inst.id);
    const synced = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
    assert.equal(synced.statusCode, 200, synced.body);
    const tool = synced.json().data.find((x: { toolKey: string }) => x.toolKey === 'echo');
    const invoke = (x: number) =>
      t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
        headers: h,
        payload: { input: { x } },
      });
    return { h, inst, invoke };
  }

  it('a refused token is refreshed once and the call goes through', async () => {
    const { h, inst, invoke } = await linkedTool();
    const before = server.tokenRequests.length;
    server.validAccess.clear();
    const res = await invoke(1);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(server.inner.calls.at(-1), { name: 'echo', args: { x: 1 } });
    const refreshes = server.tokenRequests.slice(before);
    assert.deepEqual(
      refreshes.map((r) => r.form.grant_type),
      ['refresh_token'],
    );
    assert.equal(refreshes[0].form.resource, server.url);
    assert.ok(server.validAccess.has(server.mcpTokens.at(-1)!));
    assert.equal((await getInstance(h, inst.id)).status, 'active');
  });

  it('a refused token that cannot be refreshed moves the instance to pending_auth and answers 409', async () => {
    const { h, inst, invoke } = await linkedTool();
    const before = server.tokenRequests.length;
    const calls = server.inner.calls.length;
    server.validAccess.clear();
    server.validRefresh.clear();
    const res = await invoke(2);
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().error.code, 'CONFLICT');
    assert.match(res.json().error.message, /re-authorization is needed/);
    // One refresh attempt, no call reached the tool.
    assert.equal(server.tokenRequests.length - before, 1);
    assert.equal(server.inner.calls.length, calls);
    const fresh = await getInstance(h, inst.id);
    assert.equal(fresh.status, 'pending_auth');
    assert.match(fresh.healthMessage, /re-authorization is needed/);
    // A new link restores it.
    await link(h, inst.id);
    assert.equal((await getInstance(h, inst.id)).status, 'active');
    assert.equal((await invoke(3)).statusCode, 200);
  });

  it('a 403 insufficient_scope waits for a link asking for the union of scopes, then the call goes through', async () => {
    const { h, inst, invoke } = await linkedTool();
    server.callScopes = (granted) => (granted.includes('write') ? [] : ['tools', 'write']);
    const calls = server.inner.calls.length;
    const res = await invoke(4);
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().error.code, 'CONFLICT');
    assert.match(res.json().error.message, /requires the scope\(s\) write/);
    assert.equal(server.inner.calls.length, calls);
    const fresh = await getInstance(h, inst.id);
    assert.equal(fresh.status, 'pending_auth');
    assert.match(fresh.healthMessage, /scope\(s\) write/);
    const asked = await link(h, inst.id);
    assert.equal(asked.get('scope'), 'tools write');
    const status = await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/credentials/status`, headers: h });
    assert.deepEqual(status.json().data.scopes, ['tools', 'write']);
    const again = await invoke(5);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(server.inner.calls.at(-1), { name: 'echo', args: { x: 5 } });
  });

  it('stops when the server asks again for scopes the link already grants', async () => {
    const { h, inst, invoke } = await linkedTool();
    // A step-up is granted; then the server refuses again for a scope the grant holds.
    server.callScopes = (granted) => (granted.includes('never-granted') ? ['tools'] : ['tools', 'never-granted']);
    const first = await invoke(6);
    assert.equal(first.statusCode, 409, first.body);
    const asked = await link(h, inst.id);
    assert.equal(asked.get('scope'), 'tools never-granted');
    const second = await invoke(7);
    assert.equal(second.statusCode, 502, second.body);
    assert.equal(second.json().error.code, 'UPSTREAM_FAILED');
    assert.match(second.json().error.message, /does not re-authorize again/);
    const fresh = await getInstance(h, inst.id);
    assert.equal(fresh.status, 'error');
    assert.match(fresh.healthMessage, /insufficient scope/);
  });

  it('follows at most two step-ups in a row for one link', async () => {
    const { h, inst, invoke } = await linkedTool();
    // Every grant is refused for one scope more than it holds.
    server.callScopes = (granted) => [...granted, `more-${granted.length}`];
    const authorizations: string[] = [];
    for (let round = 0; round < 2; round++) {
      const res = await invoke(10 + round);
      assert.equal(res.statusCode, 409, res.body);
      authorizations.push(String((await link(h, inst.id)).get('scope')));
    }
    assert.deepEqual(authorizations, ['tools more-1', 'tools more-1 more-2']);
    const last = await invoke(12);
    assert.equal(last.statusCode, 502, last.body);
    assert.match(last.json().error.message, /after 2 step-up re-authorization/);
    assert.equal((await getInstance(h, inst.id)).status, 'error');
  });
});
