import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { bearer, makeUser } from '../helpers/factories.js';
import { addMember } from '../helpers/tenancy.js';
import { endpointOf, legacyClient } from '../helpers/mcp-gateway.js';
import { mcpSetup, mcpTokens } from '../helpers/mcp-oauth.js';
import { startProtectedMcp, type ProtectedMcp } from '../helpers/mcp-protected.js';
import { openUserCredentials, REFUSED_401 } from '../../src/connectors/user-links.js';
import { linkCookieOf } from '../helpers/connector-links.js';

// docs/connectors.md, Re-authorization and Credential modes: on a per_user instance a refused
// call refreshes, or waits for a new link of, the caller's own link only.
const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;
type Person = { userId: string; headers: Record<string, string>; email: string; password: string };
type LinkResult = {
  isError?: boolean;
  content: Array<{ text: string }>;
  _meta?: Record<string, { url: string; instanceId: string }>;
};

describe('re-authorization of members’ own links on a per_user instance', () => {
  let raw: TestApp;
  let t: App;
  let server: ProtectedMcp;
  before(async () => {
    server = await startProtectedMcp([{ name: 'whoami', inputSchema: { type: 'object' } }]);
    raw = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    await raw.server.start();
    t = withJson(raw);
  });
  afterEach(() => {
    server.callScopes = null;
  });
  after(async () => {
    await t.close();
    await server.close();
  });

  /** An account owner (with an OAuth client for MCP) and members of its default workspace. */
  async function team(roles: string[]) {
    const setup = await mcpSetup(raw);
    const person = async (user: { id: string; email: string; password: string }): Promise<Person> => {
      const session = await raw.app.services.identity.sessions.start(user.id);
      return { userId: user.id, headers: bearer(session.accessToken), email: user.email, password: user.password };
    };
    const owner = await person(setup.user);
    const members: Person[] = [];
    for (const role of roles) {
      const user = await makeUser(raw.app);
      await addMember(raw.app, setup.account.id, user.id, role);
      members.push(await person(user));
    }
    /** An MCP access token of `who`, bound to the team's default workspace. */
    const mcpToken = async (who: Person) =>
      (
        await mcpTokens(raw, {
          ...setup,
          user: { ...setup.user, id: who.userId, email: who.email, password: who.password },
        })
      ).access_token;
    return { owner, members, mcpToken };
  }

  /** Initiate as `h` (with `scopes` when given), follow the authorization URL, then Gantry's callback. */
  async function link(h: Record<string, string>, id: string, scopes?: string[]) {
    const started = await t.inject({
      method: 'POST',
      url: `${C}/instances/${id}/oauth/initiate`,
      headers: h,
      ...(scopes ? { payload: { scopes } } : {}),
    });
    assert.equal(started.statusCode, 200, started.body);
    const authorizeUrl = new URL(started.json().data.redirectUrl);
    const answer = await fetch(authorizeUrl, { redirect: 'manual' });
    const back = new URL(String(answer.headers.get('location')));
    const res = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
    assert.equal(new URL(String(res.headers.location)).searchParams.get('status'), 'success');
    return authorizeUrl.searchParams;
  }

  /** A per_user instance the owner (with `ownerScopes`) and the members linked, its tool synced. */
  async function linkedInstance(people: Person[], ownerScopes?: string[]) {
    const [owner, ...members] = people;
    const res = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: owner.headers,
      payload: {
        connectorKey: 'mcp-generic',
        displayName: 'Remote',
        config: { url: server.url },
        toolPrefix: '',
        credentialMode: 'per_user',
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const inst = res.json().data as { id: string };
    await link(owner.headers, inst.id, ownerScopes);
    for (const m of members) await link(m.headers, inst.id);
    const synced = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/sync-tools`,
      headers: owner.headers,
    });
    assert.equal(synced.statusCode, 200, synced.body);
    const toolId = synced.json().data[0].id as string;
    return { inst, toolId };
  }

  const invoke = (h: Record<string, string>, id: string, toolId: string, input: Record<string, unknown>) =>
    t.inject({ method: 'POST', url: `${C}/instances/${id}/tools/${toolId}/invoke`, headers: h, payload: { input } });
  const instanceOf = async (h: Record<string, string>, id: string) =>
    (await t.inject({ method: 'GET', url: `${C}/instances/${id}`, headers: h })).json().data;
  /** A member's link row and its opened values. */
  async function linkOf(instanceId: string, userId: string) {
    const row = await raw.app.kernel.db
      .selectFrom('connector_user_credentials')
      .selectAll()
      .where('instance_id', '=', instanceId)
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return { row, values: openUserCredentials(raw.app.kernel.secrets, row) };
  }
  const callBy = (who: string) => server.toolCalls.find((c) => (c.args as { who?: string })?.who === who);

  it("a member's refused token: their own link is refreshed once and the call goes through; another member's link is untouched", async () => {
    const { owner, members } = await team(['member']);
    const [alice] = members;
    const { inst, toolId } = await linkedInstance([owner, alice]);
    // A first call each: the members' upstream sessions are open with their tokens.
    assert.equal((await invoke(alice.headers, inst.id, toolId, { who: 'alice-0' })).statusCode, 200);
    assert.equal((await invoke(owner.headers, inst.id, toolId, { who: 'owner-0' })).statusCode, 200);
    const aliceBefore = await linkOf(inst.id, alice.userId);
    const ownerBefore = await linkOf(inst.id, owner.userId);
    assert.equal(callBy('alice-0')?.token, aliceBefore.values.access_token);

    // The server stops taking Alice's access token only.
    assert.ok(server.validAccess.delete(aliceBefore.values.access_token));
    const tokenRequests = server.tokenRequests.length;
    const res = await invoke(alice.headers, inst.id, toolId, { who: 'alice-1' });
    assert.equal(res.statusCode, 200, res.body);

    // One refresh, of Alice's refresh token, with resource.
    const refreshes = server.tokenRequests.slice(tokenRequests);
    assert.deepEqual(
      refreshes.map((r) => [r.form.grant_type, r.form.refresh_token, r.form.resource]),
      [['refresh_token', aliceBefore.values.refresh_token, server.url]],
    );
    const aliceAfter = await linkOf(inst.id, alice.userId);
    assert.notEqual(aliceAfter.values.access_token, aliceBefore.values.access_token);
    assert.equal(aliceAfter.row.relink_reason, null);
    assert.equal(aliceAfter.row.refresh_claim, null);
    // The call ran once, with her new token.
    assert.equal(server.toolCalls.filter((c) => (c.args as { who?: string })?.who === 'alice-1').length, 1);
    assert.equal(callBy('alice-1')?.token, aliceAfter.values.access_token);

    // The owner's link is as it was, and their calls still carry their own token.
    const ownerAfter = await linkOf(inst.id, owner.userId);
    assert.equal(ownerAfter.row.sealed_value, ownerBefore.row.sealed_value);
    assert.equal(ownerAfter.row.relink_reason, null);
    assert.equal((await invoke(owner.headers, inst.id, toolId, { who: 'owner-1' })).statusCode, 200);
    assert.equal(callBy('owner-1')?.token, ownerBefore.values.access_token);
    // Nothing in the shared credential, the instance unchanged.
    const shared = await raw.app.kernel.db
      .selectFrom('connector_credentials')
      .select('id')
      .where('instance_id', '=', inst.id)
      .execute();
    assert.equal(shared.length, 0);
    assert.equal((await instanceOf(owner.headers, inst.id)).status, 'active');
  });

  it("a member's token refused and not refreshable: only their link waits for a re-link (409 over REST, the link result over MCP)", async () => {
    const { owner, members, mcpToken } = await team(['member']);
    const [alice] = members;
    const { inst, toolId } = await linkedInstance([owner, alice]);
    const before = await instanceOf(owner.headers, inst.id);
    const aliceLink = await linkOf(inst.id, alice.userId);
    assert.ok(server.validAccess.delete(aliceLink.values.access_token));
    assert.ok(server.validRefresh.delete(aliceLink.values.refresh_token));
    const tokenRequests = server.tokenRequests.length;
    const calls = server.toolCalls.length;

    const res = await invoke(alice.headers, inst.id, toolId, { who: 'alice-refused' });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().error.code, 'CONFLICT');
    assert.match(res.json().error.message, /must be made again \(the MCP server refused your token\)/);
    assert.equal(res.json().error.details[0].message, 'relink_required');
    // One refresh attempt; nothing reached the tool.
    assert.equal(server.tokenRequests.length - tokenRequests, 1);
    assert.equal(server.toolCalls.length, calls);
    assert.equal((await linkOf(inst.id, alice.userId)).row.relink_reason, REFUSED_401);
    assert.equal((await linkOf(inst.id, owner.userId)).row.relink_reason, null);

    // Over MCP Alice is told to link again; the owner's calls go on; the instance is unchanged.
    const aliceMcp = await legacyClient(endpointOf(raw), await mcpToken(alice));
    try {
      const no = (await aliceMcp.callTool({ name: 'whoami', arguments: { who: 'alice-mcp' } })) as LinkResult;
      assert.equal(no.isError, true);
      assert.match(no.content[0].text, /must be made again/);
      assert.equal(no._meta?.['io.gantry/link']?.instanceId, inst.id);
      assert.ok(!callBy('alice-mcp'));
    } finally {
      await aliceMcp.close();
    }
    assert.equal((await invoke(owner.headers, inst.id, toolId, { who: 'owner-ok' })).statusCode, 200);
    const after = await instanceOf(owner.headers, inst.id);
    assert.equal(after.status, 'active');
    assert.equal(after.healthMessage, before.healthMessage);
  });

  it('a 403 insufficient_scope marks only that member for a re-link, and their next initiate asks for the union of scopes', async () => {
    const { owner, members, mcpToken } = await team(['member', 'member']);
    const [alice, bob] = members;
    // The owner linked with the scope the tool needs; Alice and Bob with the default one.
    const { inst, toolId } = await linkedInstance([owner, alice, bob], ['tools', 'write']);
    server.callScopes = (granted) => (granted.includes('write') ? [] : ['tools', 'write']);
    const before = await instanceOf(owner.headers, inst.id);
    const ownerLink = await linkOf(inst.id, owner.userId);
    const bobLink = await linkOf(inst.id, bob.userId);
    const calls = server.inner.calls.length;

    const res = await invoke(alice.headers, inst.id, toolId, { who: 'alice-1' });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().error.code, 'CONFLICT');
    assert.match(res.json().error.message, /must be made again \(the MCP server requires the scope\(s\) write/);
    assert.match(res.json().error.message, /the next link asks for tools write/);
    assert.equal(res.json().error.details[0].message, 'relink_required');
    assert.equal(server.inner.calls.length, calls);
    const aliceMarked = await linkOf(inst.id, alice.userId);
    assert.match(String(aliceMarked.row.relink_reason), /scope\(s\) write/);
    assert.deepEqual(JSON.parse(aliceMarked.values.mcp_step_up), { scopes: ['tools', 'write'], round: 0 });
    const status = await t.inject({
      method: 'GET',
      url: `${C}/instances/${inst.id}/credentials/status`,
      headers: alice.headers,
    });
    assert.equal(status.json().data.relinkRequired, true);

    // Nobody else's link changed; the owner's calls go on; the instance is as it was.
    assert.equal((await linkOf(inst.id, owner.userId)).row.sealed_value, ownerLink.row.sealed_value);
    assert.equal((await linkOf(inst.id, bob.userId)).row.sealed_value, bobLink.row.sealed_value);
    assert.equal((await linkOf(inst.id, bob.userId)).row.relink_reason, null);
    assert.equal((await invoke(owner.headers, inst.id, toolId, { who: 'owner-1' })).statusCode, 200);
    const after = await instanceOf(owner.headers, inst.id);
    assert.equal(after.status, 'active');
    assert.equal(after.healthMessage, before.healthMessage);

    // Bob's step-up over MCP: the link result, his link alone marked.
    const bobMcp = await legacyClient(endpointOf(raw), await mcpToken(bob));
    try {
      const no = (await bobMcp.callTool({ name: 'whoami', arguments: { who: 'bob-mcp' } })) as LinkResult;
      assert.equal(no.isError, true);
      assert.match(no.content[0].text, /requires the scope\(s\) write/);
      assert.equal(no._meta?.['io.gantry/link']?.instanceId, inst.id);
    } finally {
      await bobMcp.close();
    }
    assert.match(String((await linkOf(inst.id, bob.userId)).row.relink_reason), /scope\(s\) write/);

    // Alice's next initiate asks for the union; her new link works.
    const asked = await link(alice.headers, inst.id);
    assert.equal(asked.get('scope'), 'tools write');
    const relinked = await linkOf(inst.id, alice.userId);
    assert.equal(relinked.row.relink_reason, null);
    assert.deepEqual(JSON.parse(relinked.row.scopes ?? '[]'), ['tools', 'write']);
    assert.equal(relinked.values.mcp_step_up, undefined);
    const again = await invoke(alice.headers, inst.id, toolId, { who: 'alice-2' });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(callBy('alice-2')?.token, relinked.values.access_token);

    // A server asking for scopes her link already grants is not followed: 502, and neither her
    // link nor the instance changes.
    server.callScopes = (granted) => (granted.includes('write') ? ['write'] : ['tools', 'write']);
    const stuck = await invoke(alice.headers, inst.id, toolId, { who: 'alice-3' });
    assert.equal(stuck.statusCode, 502, stuck.body);
    assert.equal(stuck.json().error.code, 'UPSTREAM_FAILED');
    assert.match(stuck.json().error.message, /does not re-authorize again/);
    assert.equal((await linkOf(inst.id, alice.userId)).row.relink_reason, null);
    assert.equal((await instanceOf(owner.headers, inst.id)).status, 'active');
  });
});
