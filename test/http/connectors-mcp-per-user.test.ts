import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { bearer, makeUser } from '../helpers/factories.js';
import { addMember } from '../helpers/tenancy.js';
import { endpointOf, legacyClient } from '../helpers/mcp-gateway.js';
import { mcpSetup, mcpTokens } from '../helpers/mcp-oauth.js';
import { startProtectedMcp, type ProtectedMcp } from '../helpers/mcp-protected.js';
import { openUserCredentials } from '../../src/connectors/user-links.js';
import { linkCookieOf } from '../helpers/connector-links.js';

// docs/connectors.md, Credential modes: a per_user instance calls its server with each
// member's own linked account; a member without one is told to link it.
const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;
type Person = { userId: string; headers: Record<string, string>; email: string; password: string };

describe('per_user credential mode on an OAuth-protected MCP server', () => {
  let raw: TestApp;
  let t: App;
  let server: ProtectedMcp;
  before(async () => {
    server = await startProtectedMcp([{ name: 'whoami', inputSchema: { type: 'object' } }]);
    raw = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    await raw.server.start();
    t = withJson(raw);
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
    return { setup, owner, members, mcpToken };
  }

  async function perUserInstance(h: Record<string, string>, mode = 'per_user') {
    const res = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: h,
      payload: {
        connectorKey: 'mcp-generic',
        displayName: 'Remote',
        config: { url: server.url },
        toolPrefix: '',
        credentialMode: mode,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data as { id: string; credentialMode: string; status: string };
  }

  /** Initiate as `h`, follow the authorization URL as a browser, then Gantry's callback. */
  async function link(h: Record<string, string>, id: string) {
    const started = await t.inject({ method: 'POST', url: `${C}/instances/${id}/oauth/initiate`, headers: h });
    assert.equal(started.statusCode, 200, started.body);
    const answer = await fetch(started.json().data.redirectUrl, { redirect: 'manual' });
    const back = new URL(String(answer.headers.get('location')));
    const res = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
    const location = new URL(String(res.headers.location));
    return { location, code: back.searchParams.get('code')! };
  }

  const invoke = (h: Record<string, string>, id: string, toolId: string, input: Record<string, unknown>) =>
    t.inject({ method: 'POST', url: `${C}/instances/${id}/tools/${toolId}/invoke`, headers: h, payload: { input } });
  const status = async (h: Record<string, string>, id: string) =>
    (await t.inject({ method: 'GET', url: `${C}/instances/${id}/credentials/status`, headers: h })).json().data;
  const linksOf = (instanceId: string) =>
    raw.app.kernel.db
      .selectFrom('connector_user_credentials')
      .select(['user_id', 'relink_reason'])
      .where('instance_id', '=', instanceId)
      .execute();

  it('each member reaches the server with their own token; an unlinked one gets a 409 and an MCP error to link', async () => {
    const { owner, members, mcpToken } = await team(['member', 'member']);
    const [alice, bob] = members;
    const inst = await perUserInstance(owner.headers);
    assert.equal(inst.credentialMode, 'per_user');
    assert.equal(inst.status, 'pending_auth');

    // Sync with no link of one's own: refused with the link message, the instance unchanged.
    const early = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/sync-tools`,
      headers: alice.headers,
    });
    assert.equal(early.statusCode, 409, early.body);
    assert.equal(early.json().error.code, 'CONFLICT');
    assert.match(early.json().error.message, /you have not linked yours/);

    const codes: string[] = [];
    for (const who of [owner, alice]) {
      const linked = await link(who.headers, inst.id);
      assert.equal(linked.location.searchParams.get('status'), 'success', linked.location.href);
      codes.push(linked.code);
    }
    assert.deepEqual((await linksOf(inst.id)).map((l) => l.user_id).sort(), [owner.userId, alice.userId].sort());
    // The shared credential stays empty: nothing was linked for everyone.
    const shared = await raw.app.kernel.db
      .selectFrom('connector_credentials')
      .select('id')
      .where('instance_id', '=', inst.id)
      .execute();
    assert.equal(shared.length, 0);

    const synced = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/sync-tools`,
      headers: alice.headers,
    });
    assert.equal(synced.statusCode, 200, synced.body);
    const toolId = synced.json().data.find((x: { toolKey: string }) => x.toolKey === 'whoami').id;
    const got = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: owner.headers })).json()
      .data;
    assert.equal(got.status, 'active');

    // REST: two members, two tokens.
    const byOwner = await invoke(owner.headers, inst.id, toolId, { who: 'owner' });
    assert.equal(byOwner.statusCode, 200, byOwner.body);
    const byAlice = await invoke(alice.headers, inst.id, toolId, { who: 'alice' });
    assert.equal(byAlice.statusCode, 200, byAlice.body);
    const ownerCall = server.toolCalls.find((c) => (c.args as { who?: string })?.who === 'owner')!;
    const aliceCall = server.toolCalls.find((c) => (c.args as { who?: string })?.who === 'alice')!;
    assert.ok(ownerCall && aliceCall, 'both calls reached the server');
    assert.notEqual(ownerCall.token, aliceCall.token);

    // Credential status answers for the caller.
    const mine = await status(alice.headers, inst.id);
    assert.equal(mine.configured, true);
    assert.equal(mine.credType, 'oauth2');
    assert.equal(mine.credentialMode, 'per_user');
    assert.equal(mine.relinkRequired, false);
    const bobs = await status(bob.headers, inst.id);
    assert.equal(bobs.configured, false);
    assert.equal(bobs.relinkRequired, false);

    // Bob has no link: a clear 409 over REST, nothing sent upstream.
    const calls = server.toolCalls.length;
    const refused = await invoke(bob.headers, inst.id, toolId, { who: 'bob' });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().error.code, 'CONFLICT');
    assert.match(refused.json().error.message, /credentialMode per_user/);
    assert.match(refused.json().error.message, new RegExp(`POST /connectors/instances/${inst.id}/oauth/initiate`));
    assert.equal(server.toolCalls.length, calls);

    // MCP: Alice's call carries Alice's token; Bob's is an isError result with the link.
    const aliceMcp = await legacyClient(endpointOf(raw), await mcpToken(alice));
    const bobMcp = await legacyClient(endpointOf(raw), await mcpToken(bob));
    try {
      const ok = (await aliceMcp.callTool({ name: 'whoami', arguments: { who: 'alice-mcp' } })) as {
        isError?: boolean;
      };
      assert.notEqual(ok.isError, true, JSON.stringify(ok));
      const viaMcp = server.toolCalls.find((c) => (c.args as { who?: string })?.who === 'alice-mcp')!;
      assert.equal(viaMcp.token, aliceCall.token);
      const no = (await bobMcp.callTool({ name: 'whoami', arguments: { who: 'bob-mcp' } })) as {
        isError?: boolean;
        content: Array<{ text: string }>;
        _meta?: Record<string, { url: string; instanceId: string }>;
      };
      assert.equal(no.isError, true);
      assert.match(no.content[0].text, /not linked/);
      const linkUrl = `http://127.0.0.1:8080/settings/connectors?connector=mcp-generic&instanceId=${inst.id}&action=link`;
      assert.ok(no.content[0].text.includes(linkUrl), no.content[0].text);
      assert.deepEqual(no._meta?.['io.gantry/link'], { instanceId: inst.id, url: linkUrl });
      assert.ok(!server.toolCalls.some((c) => (c.args as { who?: string })?.who === 'bob-mcp'));
    } finally {
      await aliceMcp.close();
      await bobMcp.close();
    }
    const audit = await raw.app.kernel.db
      .selectFrom('account_audit_log')
      .select(['action', 'metadata'])
      .where('target_id', '=', toolId)
      .where('action', '=', 'mcp.tool_called')
      .execute();
    assert.ok(audit.some((a) => String(a.metadata).includes('"outcome":"link_required"')));

    // Linking is audited per member.
    const linkedRows = await raw.app.kernel.db
      .selectFrom('account_audit_log')
      .select(['actor_id', 'metadata'])
      .where('target_id', '=', inst.id)
      .where('action', '=', 'connector.oauth_linked')
      .execute();
    assert.deepEqual(linkedRows.map((r) => r.actor_id).sort(), [owner.userId, alice.userId].sort());
    assert.ok(linkedRows.every((r) => String(r.metadata).includes('"credentialMode":"per_user"')));

    // Nothing secret in plain text in the database files or the logs.
    const secrets = [
      ownerCall.token,
      aliceCall.token,
      ...server.validRefresh,
      ...[...server.clients.values()].map((c) => c.secret).filter((s): s is string => s !== null),
      ...codes,
    ];
    const files = readdirSync(raw.dataDir).map((f) => readFileSync(path.join(raw.dataDir, f)).toString('latin1'));
    for (const secret of secrets) {
      for (const file of files) assert.ok(!file.includes(secret), 'a secret is stored in plain text');
      assert.ok(!raw.logs.some((l) => l.includes(secret)), 'a secret is logged');
    }
  });

  it("a refused refresh marks only that member's link for a re-link; the instance stays active", async () => {
    const { owner, members } = await team(['member']);
    const [alice] = members;
    const inst = await perUserInstance(owner.headers);
    await link(owner.headers, inst.id);
    await link(alice.headers, inst.id);
    const synced = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/sync-tools`,
      headers: owner.headers,
    });
    const toolId = synced.json().data[0].id;
    // Alice's refresh token alone is refused by the server.
    const aliceRow = await raw.app.kernel.db
      .selectFrom('connector_user_credentials')
      .selectAll()
      .where('instance_id', '=', inst.id)
      .where('user_id', '=', alice.userId)
      .executeTakeFirstOrThrow();
    const aliceRefresh = openUserCredentials(raw.app.kernel.secrets, aliceRow).refresh_token;
    assert.ok(server.validRefresh.delete(aliceRefresh));
    const run = await raw.app.services.connectors.oauth.refreshDue(raw.app.kernel.clock.now(), 2 * 3600_000);
    assert.ok(run.failed >= 1);
    const links = new Map((await linksOf(inst.id)).map((l) => [l.user_id, l.relink_reason]));
    assert.match(String(links.get(alice.userId)), /refresh failed/);
    assert.equal(links.get(owner.userId), null);
    const got = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: owner.headers })).json()
      .data;
    assert.equal(got.status, 'active');
    const mine = await status(alice.headers, inst.id);
    assert.equal(mine.relinkRequired, true);
    assert.match(mine.relinkReason, /refresh failed/);
    const refused = await invoke(alice.headers, inst.id, toolId, {});
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(refused.json().error.message, /must be made again/);
    const ownerStill = await invoke(owner.headers, inst.id, toolId, {});
    assert.equal(ownerStill.statusCode, 200, ownerStill.body);
    // Alice is told; a new link clears it.
    const notes = await raw.app.kernel.db
      .selectFrom('notifications')
      .select(['title', 'action_url'])
      .where('user_id', '=', alice.userId)
      .execute();
    assert.ok(notes.some((n) => /Your link to Remote/.test(n.title) && String(n.action_url).includes('action=link')));
    await link(alice.headers, inst.id);
    assert.equal((await status(alice.headers, inst.id)).relinkRequired, false);
    const again = await invoke(alice.headers, inst.id, toolId, {});
    assert.equal(again.statusCode, 200, again.body);
  });

  it('refreshes a member link with resource, and the member then calls with the new token', async () => {
    const { owner } = await team([]);
    const inst = await perUserInstance(owner.headers);
    await link(owner.headers, inst.id);
    const synced = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/sync-tools`,
      headers: owner.headers,
    });
    const toolId = synced.json().data[0].id;
    await invoke(owner.headers, inst.id, toolId, { n: 1 });
    const first = server.toolCalls.at(-1)!.token;
    const run = await raw.app.services.connectors.oauth.refreshDue(raw.app.kernel.clock.now(), 2 * 3600_000);
    assert.equal(run.failed, 0);
    assert.ok(run.refreshed >= 1);
    const refresh = server.tokenRequests.at(-1)!;
    assert.equal(refresh.form.grant_type, 'refresh_token');
    assert.equal(refresh.form.resource, server.url);
    const again = await invoke(owner.headers, inst.id, toolId, { n: 2 });
    assert.equal(again.statusCode, 200, again.body);
    assert.notEqual(server.toolCalls.at(-1)!.token, first);
  });

  it("removing a member deletes their links (account or workspace removal), audited; others' stay", async () => {
    const { setup, owner, members } = await team(['member', 'member']);
    const [alice, bob] = members;
    const inst = await perUserInstance(owner.headers);
    for (const who of [owner, alice, bob]) await link(who.headers, inst.id);
    assert.equal((await linksOf(inst.id)).length, 3);

    const removed = await t.inject({
      method: 'DELETE',
      url: `/api/v1/accounts/${setup.account.id}/members/${alice.userId}`,
      headers: owner.headers,
    });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual((await linksOf(inst.id)).map((l) => l.user_id).sort(), [owner.userId, bob.userId].sort());

    const wsRemoved = await t.inject({
      method: 'DELETE',
      url: `/api/v1/accounts/${setup.account.id}/workspaces/${setup.defaultWorkspace}/members/${bob.userId}`,
      headers: owner.headers,
    });
    assert.equal(wsRemoved.statusCode, 200, wsRemoved.body);
    assert.deepEqual(
      (await linksOf(inst.id)).map((l) => l.user_id),
      [owner.userId],
    );
    const audit = await raw.app.kernel.db
      .selectFrom('account_audit_log')
      .select(['actor_id', 'metadata'])
      .where('target_id', '=', inst.id)
      .where('action', '=', 'connector.credentials_deleted')
      .execute();
    const forgotten = audit.filter((a) => String(a.metadata).includes('"reason":"member_removed"'));
    assert.equal(forgotten.length, 2);
    assert.ok(forgotten.every((a) => a.actor_id === owner.userId));
  });

  it('a member unlinks their own account; DELETE credentials leaves the others and the instance alone', async () => {
    const { owner, members } = await team(['member']);
    const [alice] = members;
    const inst = await perUserInstance(owner.headers);
    await link(owner.headers, inst.id);
    await link(alice.headers, inst.id);
    const res = await t.inject({
      method: 'DELETE',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: alice.headers,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      (await linksOf(inst.id)).map((l) => l.user_id),
      [owner.userId],
    );
    const again = await t.inject({
      method: 'DELETE',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: alice.headers,
    });
    assert.equal(again.statusCode, 404, again.body);
    const got = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: owner.headers })).json()
      .data;
    assert.equal(got.status, 'active');
  });

  it('switching modes: owner/admin only; the credentials of the mode left are deleted', async () => {
    const { owner, members } = await team(['member']);
    const [alice] = members;
    const inst = await perUserInstance(owner.headers, 'shared');
    assert.equal(inst.credentialMode, 'shared');
    const { location } = await link(owner.headers, inst.id);
    assert.equal(location.searchParams.get('status'), 'success');
    const sharedRows = () =>
      raw.app.kernel.db.selectFrom('connector_credentials').select('id').where('instance_id', '=', inst.id).execute();
    assert.equal((await sharedRows()).length, 1);

    const patch = (h: Record<string, string>, credentialMode: string) =>
      t.inject({ method: 'PATCH', url: `${C}/instances/${inst.id}`, headers: h, payload: { credentialMode } });
    const byMember = await patch(alice.headers, 'per_user');
    assert.equal(byMember.statusCode, 403, byMember.body);
    assert.equal(byMember.json().error.code, 'FORBIDDEN');
    const bad = await patch(owner.headers, 'everyone');
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(bad.json().error.code, 'VALIDATION_FAILED');

    const toPerUser = await patch(owner.headers, 'per_user');
    assert.equal(toPerUser.statusCode, 200, toPerUser.body);
    assert.equal(toPerUser.json().data.credentialMode, 'per_user');
    assert.equal(toPerUser.json().data.status, 'pending_auth');
    assert.equal((await sharedRows()).length, 0);

    await link(alice.headers, inst.id);
    // A link started before a switch is not stored after it.
    const started = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/oauth/initiate`,
      headers: owner.headers,
    });
    const answer = await fetch(started.json().data.redirectUrl, { redirect: 'manual' });
    const back = new URL(String(answer.headers.get('location')));
    const toShared = await patch(owner.headers, 'shared');
    assert.equal(toShared.statusCode, 200, toShared.body);
    assert.equal(toShared.json().data.credentialMode, 'shared');
    assert.equal((await linksOf(inst.id)).length, 0);
    const late = await t.inject({ method: 'GET', url: back.pathname + back.search, headers: linkCookieOf(started) });
    assert.equal(new URL(String(late.headers.location)).searchParams.get('reason'), 'mode_changed');
    assert.equal((await sharedRows()).length, 0);

    const audit = await raw.app.kernel.db
      .selectFrom('account_audit_log')
      .select(['action', 'metadata'])
      .where('target_id', '=', inst.id)
      .where('action', 'in', ['connector.credentials_deleted', 'connector.updated'])
      .execute();
    assert.equal(audit.filter((a) => String(a.metadata).includes('"reason":"mode_changed"')).length, 2);
    assert.ok(audit.some((a) => String(a.metadata).includes('"toCredentialMode":"per_user"')));
  });

  it('URL elicitation of the link page for clients that declared it (2025-11-25 and 2026-07-28)', async () => {
    const { owner, members, mcpToken } = await team(['member']);
    const [bob] = members;
    const inst = await perUserInstance(owner.headers);
    await link(owner.headers, inst.id);
    const synced = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/sync-tools`,
      headers: owner.headers,
    });
    assert.equal(synced.statusCode, 200, synced.body);
    const linkUrl = `http://127.0.0.1:8080/settings/connectors?connector=mcp-generic&instanceId=${inst.id}&action=link`;
    const token = await mcpToken(bob);
    const calls = server.toolCalls.length;

    const legacy = new LegacyClient(
      { name: 'legacy-url', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } } },
    );
    await legacy.connect(
      new LegacyTransport(new URL(endpointOf(raw)), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    try {
      const err = await legacy.callTool({ name: 'whoami', arguments: {} }).then(
        () => assert.fail('expected URLElicitationRequired'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof UrlElicitationRequiredError, String(err));
      assert.equal(err.code, ErrorCode.UrlElicitationRequired);
      assert.equal(err.elicitations[0].mode, 'url');
      assert.equal(err.elicitations[0].url, linkUrl);
      assert.match(err.message, /link your account/);
    } finally {
      await legacy.close();
    }

    const seen: Array<Record<string, unknown>> = [];
    const modern = new ModernClient(
      { name: 'modern-url', version: '2.0.0' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    modern.setRequestHandler('elicitation/create', async (request) => {
      seen.push(request.params as Record<string, unknown>);
      return { action: 'accept' };
    });
    await modern.connect(
      new ModernTransport(new URL(endpointOf(raw)), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    try {
      // The driver shows the page and retries with the answer: still not linked, so the isError result.
      const result = (await modern.callTool({ name: 'whoami', arguments: {} })) as { isError?: boolean };
      assert.equal(seen.length, 1);
      assert.equal(seen[0].mode, 'url');
      assert.equal(seen[0].url, linkUrl);
      assert.equal(result.isError, true);
    } finally {
      await modern.close();
    }
    assert.equal(server.toolCalls.length, calls, 'nothing reached the server');
  });

  it('an approval-gated tool asks no approval for a member who could not make the call; approved, it runs as its requester', async () => {
    const { owner, members, mcpToken } = await team(['member', 'member']);
    const [bob, alice] = members;
    const inst = await perUserInstance(owner.headers);
    await link(owner.headers, inst.id);
    await link(alice.headers, inst.id);
    const synced = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/sync-tools`,
      headers: owner.headers,
    });
    const toolId = synced.json().data[0].id;
    const gated = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}/tools/${toolId}`,
      headers: owner.headers,
      payload: { requiresApproval: true },
    });
    assert.equal(gated.statusCode, 200, gated.body);
    const approvals = () =>
      raw.app.kernel.db
        .selectFrom('connector_tool_approvals')
        .select('id')
        .where('instance_id', '=', inst.id)
        .execute();
    const calls = server.toolCalls.length;
    const refused = await invoke(bob.headers, inst.id, toolId, {});
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(refused.json().error.message, /you have not linked yours/);
    const client = await legacyClient(endpointOf(raw), await mcpToken(bob));
    try {
      const result = (await client.callTool({ name: 'whoami', arguments: {} })) as {
        isError?: boolean;
        _meta?: Record<string, unknown>;
      };
      assert.equal(result.isError, true);
      assert.ok(result._meta?.['io.gantry/link']);
      assert.equal(result._meta?.['io.gantry/approval'], undefined);
    } finally {
      await client.close();
    }
    assert.equal((await approvals()).length, 0);
    assert.equal(server.toolCalls.length, calls, 'nothing reached the server');
    // Alice, linked, is parked as usual; the owner approves, and the call carries Alice's token.
    const parked = await invoke(alice.headers, inst.id, toolId, { who: 'alice-parked' });
    assert.equal(parked.statusCode, 202, parked.body);
    assert.equal(parked.json().data.status, 'pending_approval');
    const approvalId = parked.json().data.approval.id;
    const approved = await t.inject({
      method: 'POST',
      url: `${C}/approvals/${approvalId}/approve`,
      headers: owner.headers,
    });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json().data.status, 'approved', approved.body);
    const tokenOf = async (userId: string) =>
      openUserCredentials(
        raw.app.kernel.secrets,
        await raw.app.kernel.db
          .selectFrom('connector_user_credentials')
          .selectAll()
          .where('instance_id', '=', inst.id)
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow(),
      ).access_token;
    const ran = server.toolCalls.find((c) => (c.args as { who?: string })?.who === 'alice-parked');
    assert.ok(ran, 'the approved call reached the server');
    assert.equal(ran.token, await tokenOf(alice.userId));
    assert.notEqual(ran.token, await tokenOf(owner.userId));
  });

  it('shared is the default: one link for the instance, every member calls with it', async () => {
    const { owner, members } = await team(['member']);
    const [alice] = members;
    const created = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: owner.headers,
      payload: { connectorKey: 'mcp-generic', displayName: 'Shared', config: { url: server.url }, toolPrefix: '' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const inst = created.json().data as { id: string; credentialMode: string };
    assert.equal(inst.credentialMode, 'shared');
    const listed = (await t.inject({ method: 'GET', url: `${C}/instances`, headers: alice.headers })).json().data;
    assert.equal(listed.find((i: { id: string }) => i.id === inst.id).credentialMode, 'shared');
    await link(owner.headers, inst.id);
    assert.equal((await linksOf(inst.id)).length, 0, 'no member link in shared mode');
    const aliceStatus = await status(alice.headers, inst.id);
    assert.equal(aliceStatus.configured, true);
    assert.equal(aliceStatus.credType, 'oauth2');
    assert.equal(aliceStatus.credentialMode, undefined);
    const synced = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/sync-tools`,
      headers: alice.headers,
    });
    assert.equal(synced.statusCode, 200, synced.body);
    const toolId = synced.json().data[0].id;
    for (const [who, h] of [
      ['owner-shared', owner.headers],
      ['alice-shared', alice.headers],
    ] as const) {
      const res = await invoke(h, inst.id, toolId, { who });
      assert.equal(res.statusCode, 200, res.body);
    }
    const tokens = ['owner-shared', 'alice-shared'].map(
      (who) => server.toolCalls.find((c) => (c.args as { who?: string })?.who === who)?.token,
    );
    assert.ok(tokens[0]);
    assert.equal(tokens[0], tokens[1]);
  });

  it("test connect answers for the caller: an unlinked member is told to link, the instance's status stays", async () => {
    const { owner, members } = await team(['member']);
    const [bob] = members;
    const inst = await perUserInstance(owner.headers);
    await link(owner.headers, inst.id);
    const mine = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: owner.headers });
    assert.equal(mine.statusCode, 200, mine.body);
    assert.equal(mine.json().data.healthy, true, mine.body);
    const before = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: owner.headers })).json()
      .data;
    assert.equal(before.status, 'active');
    const bobs = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: bob.headers });
    assert.equal(bobs.statusCode, 200, bobs.body);
    assert.equal(bobs.json().data.healthy, false);
    assert.match(bobs.json().data.message, /you have not linked yours/);
    const after = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: owner.headers })).json()
      .data;
    assert.equal(after.status, 'active');
    assert.equal(after.healthMessage, before.healthMessage);
    assert.equal(after.lastHealthCheck, before.lastHealthCheck);
  });

  it('per_user needs an MCP connector', async () => {
    const { owner } = await team([]);
    const res = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: owner.headers,
      payload: { connectorKey: 'github', displayName: 'GH', credentialMode: 'per_user' },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().error.code, 'VALIDATION_FAILED');
    assert.match(res.json().error.message, /per_user/);
  });
});
