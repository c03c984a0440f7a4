import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam, signedInUser } from '../helpers/factories.js';
import { addMember } from '../helpers/tenancy.js';
import { lastAudit } from '../helpers/accounts.js';
import { cli } from '../helpers/cli.js';
import { startLegacyMcpServer, startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;

/** Attacks on connectors by members of the same account, each now refused. */
describe('connector security', () => {
  let t: App;
  let prod: McpFake;
  let evil: McpFake;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    prod = await startModernMcpServer({
      tools: [{ name: 'delete_all', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } }],
    });
    evil = await startLegacyMcpServer({ tools: [{ name: 'delete_all', inputSchema: { type: 'object' } }] });
  });
  after(async () => {
    await prod.close();
    await evil.close();
    await t.close();
  });

  const sentTo = (fake: McpFake, secret: string) =>
    fake.requests.filter((r) => JSON.stringify(r.headers).includes(secret)).length;

  it('refuses any credential-looking header in the plain MCP config, and sends custom credentials as headers', async () => {
    const { owner } = await makeTeam(t.app);
    const h = owner.headers;
    for (const name of [
      'X-Auth-Token',
      'Api-Key',
      'x-access-token',
      'X-Session-Id',
      'X-Hub-Signature-256',
      'X-Client-Secret',
      'X-Password',
    ]) {
      const res = await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: {
          connectorKey: 'mcp-generic',
          displayName: 'M',
          config: { url: prod.url, headers: { 'X-Tenant': 'acme', [name]: 'secret-header-1' } },
        },
      });
      assert.equal(res.statusCode, 400, name);
      assert.equal(res.json().error.code, 'VALIDATION_FAILED');
      assert.deepEqual(
        res.json().error.details.map((d: { field: string }) => d.field),
        [`config.headers.${name}`],
        name,
      );
    }
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: {
          connectorKey: 'mcp-generic',
          displayName: 'M',
          config: { url: prod.url, headers: { 'X-Tenant': 'acme' } },
        },
      })
    ).json().data;
    const patched = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: h,
      payload: { config: { url: prod.url, headers: { 'X-Auth-Token': 'secret-header-1' } } },
    });
    assert.equal(patched.statusCode, 400);
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data.config.headers[
        'X-Auth-Token'
      ],
      undefined,
    );
    // The sealed home of such a header: custom credentials, sent as headers.
    const stored = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: h,
      payload: { credType: 'custom', credentials: { 'X-Auth-Token': 'sealed-header-7' } },
    });
    assert.equal(stored.statusCode, 200);
    const test = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h });
    assert.equal(test.json().data.healthy, true, test.body);
    assert.ok(
      prod.requests.some((r) => r.headers['x-auth-token'] === 'sealed-header-7' && r.headers['x-tenant'] === 'acme'),
    );
  });

  it('a workspace viewer reads connectors but cannot create, delete or store credentials', async () => {
    const { owner, account } = await makeTeam(t.app);
    const victor = await signedInUser(t.app);
    const wendy = await signedInUser(t.app);
    await addMember(t.app, account.id, victor.user.id, 'member');
    await addMember(t.app, account.id, wendy.user.id, 'member');
    const finance = (
      await t.inject({
        method: 'POST',
        url: `/api/v1/accounts/${account.id}/workspaces`,
        headers: owner.headers,
        payload: { name: 'Finance' },
      })
    ).json().data;
    for (const [user, role] of [
      [victor, 'viewer'],
      [wendy, 'member'],
    ] as const) {
      const added = await t.inject({
        method: 'POST',
        url: `/api/v1/accounts/${account.id}/workspaces/${finance.id}/members`,
        headers: owner.headers,
        payload: { chainerId: user.user.id, role },
      });
      assert.equal(added.statusCode, 201, added.body);
    }
    const inFinance = (headers: Record<string, string>) => ({ ...headers, 'x-workspace-id': finance.id });
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: inFinance(owner.headers),
        payload: { connectorKey: 'mcp-generic', displayName: 'Ledger', config: { url: prod.url } },
      })
    ).json().data;
    const attempts = [
      {
        method: 'POST',
        url: `${C}/instances`,
        payload: { connectorKey: 'mcp-generic', displayName: 'Mine', config: { url: evil.url } },
      },
      {
        method: 'POST',
        url: `${C}/instances/${inst.id}/credentials`,
        payload: { credType: 'bearer_token', credentials: { token: 'viewer-token-1' } },
      },
      { method: 'PATCH', url: `${C}/instances/${inst.id}`, payload: { displayName: 'Renamed' } },
      { method: 'POST', url: `${C}/instances/${inst.id}/test` },
      { method: 'POST', url: `${C}/definitions`, payload: { key: `viewer-def-${Date.now()}`, name: 'V' } },
      { method: 'DELETE', url: `${C}/instances/${inst.id}` },
    ];
    for (const attempt of attempts) {
      const res = await t.inject({ ...attempt, headers: inFinance(victor.headers) });
      assert.equal(res.statusCode, 403, `${attempt.method} ${attempt.url}`);
      assert.equal(res.json().error.code, 'FORBIDDEN');
    }
    const rows = await t.app.kernel.db
      .selectFrom('connector_instances')
      .select(['id', 'display_name'])
      .where('workspace_id', '=', finance.id)
      .execute();
    assert.deepEqual(rows, [{ id: inst.id, display_name: 'Ledger' }]);
    assert.equal(
      await t.app.kernel.db
        .selectFrom('connector_credentials')
        .select('id')
        .where('instance_id', '=', inst.id)
        .executeTakeFirst(),
      undefined,
    );
    // Reads still work for the viewer; a workspace member writes.
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: inFinance(victor.headers) })).json()
        .data.displayName,
      'Ledger',
    );
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances`, headers: inFinance(victor.headers) })).json().data.length,
      1,
    );
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: inFinance(wendy.headers),
          payload: { connectorKey: 'mcp-generic', displayName: 'W', config: { url: prod.url } },
        })
      ).statusCode,
      201,
    );
    // Victor is a workspace member of the default workspace: he writes there.
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: victor.headers,
          payload: { connectorKey: 'mcp-generic', displayName: 'D', config: { url: prod.url } },
        })
      ).statusCode,
      201,
    );
    // Removed from the default workspace, he still reads it as an account member but no longer writes.
    const removed = await t.inject({
      method: 'DELETE',
      url: `/api/v1/accounts/${account.id}/workspaces/${account.defaultWorkspaceId}/members/${victor.user.id}`,
      headers: owner.headers,
    });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances`, headers: victor.headers })).statusCode, 200);
    const refused = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: victor.headers,
      payload: { connectorKey: 'mcp-generic', displayName: 'D2', config: { url: prod.url } },
    });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error.code, 'FORBIDDEN');
  });

  const credentialCases = [
    { credType: 'bearer_token', credentials: { token: 'SECRET-PROD-TOKEN-123' }, secret: 'SECRET-PROD-TOKEN-123' },
    { credType: 'api_key', credentials: { apiKey: 'SECRET-PROD-KEY-456' }, secret: 'SECRET-PROD-KEY-456' },
    {
      credType: 'basic_auth',
      credentials: { username: 'prod', password: 'SECRET-PROD-PASS-789' },
      secret: Buffer.from('prod:SECRET-PROD-PASS-789').toString('base64'),
    },
  ];

  for (const c of credentialCases) {
    it(`a member who repoints the url never gets the owner's ${c.credType}: the credential is dropped`, async () => {
      const { owner, account, members } = await makeTeam(t.app, ['member']);
      const mallory = members.member.headers;
      const inst = (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: owner.headers,
          payload: { connectorKey: 'mcp-generic', displayName: 'Prod DB tools', config: { url: prod.url } },
        })
      ).json().data;
      assert.equal(
        (
          await t.inject({
            method: 'POST',
            url: `${C}/instances/${inst.id}/credentials`,
            headers: owner.headers,
            payload: { credType: c.credType, credentials: c.credentials },
          })
        ).statusCode,
        200,
      );
      assert.equal(
        (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: owner.headers })).json().data
          .healthy,
        true,
      );
      assert.ok(sentTo(prod, c.secret) > 0, 'prod gets the credential');
      // Same origin and path, another query: the credential stays.
      const samePlace = await t.inject({
        method: 'PATCH',
        url: `${C}/instances/${inst.id}`,
        headers: mallory,
        payload: { config: { url: `${prod.url}?v=2` } },
      });
      assert.equal(samePlace.json().data.status, 'active');
      assert.equal(
        (
          await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/credentials/status`, headers: owner.headers })
        ).json().data.configured,
        true,
      );
      const repointed = await t.inject({
        method: 'PATCH',
        url: `${C}/instances/${inst.id}`,
        headers: mallory,
        payload: { config: { url: evil.url } },
      });
      assert.equal(repointed.statusCode, 200);
      assert.equal(repointed.json().data.status, 'pending_auth');
      const status = (
        await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/credentials/status`, headers: owner.headers })
      ).json().data;
      assert.equal(status.configured, false);
      assert.equal(
        await t.app.kernel.db
          .selectFrom('connector_credentials')
          .select('id')
          .where('instance_id', '=', inst.id)
          .executeTakeFirst(),
        undefined,
      );
      const entry = await lastAudit(t.app, account.id, 'connector.credentials_deleted');
      assert.equal(entry.targetId, inst.id);
      assert.equal(entry.actorId, members.member.user.id);
      assert.deepEqual(entry.metadata, {
        credType: c.credType,
        reason: 'origin_changed',
        fromOrigin: new URL(prod.url).origin,
        toOrigin: new URL(evil.url).origin,
        fromTarget: `${new URL(prod.url).origin}${new URL(prod.url).pathname}`,
        toTarget: `${new URL(evil.url).origin}${new URL(evil.url).pathname}`,
      });
      // Test, sync and invoke all reach the member's server without the owner's secret.
      assert.equal(
        (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: mallory })).json().data
          .healthy,
        true,
      );
      const synced = (
        await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: mallory })
      ).json().data;
      await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/tools/${synced[0].id}/invoke`,
        headers: mallory,
        payload: { input: {} },
      });
      assert.ok(evil.requests.length > 0);
      assert.equal(sentTo(evil, c.secret), 0, "the member's server never sees the owner's credential");
    });
  }

  it('N-L3: another path on the same origin (one host, a server per path) drops the credential too', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['member']);
    const mallory = members.member.headers;
    const secret = 'OWNER-TOKEN-SAMEORIGIN';
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: owner.headers,
        payload: { connectorKey: 'mcp-generic', displayName: 'Shared host', config: { url: prod.url } },
      })
    ).json().data;
    await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: owner.headers,
      payload: { credType: 'bearer_token', credentials: { token: secret } },
    });
    const elsewhere = `${new URL(prod.url).origin}/u/mallory/mcp`;
    const moved = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: mallory,
      payload: { config: { url: elsewhere } },
    });
    assert.equal(moved.statusCode, 200);
    assert.equal(moved.json().data.status, 'pending_auth');
    const status = (
      await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/credentials/status`, headers: owner.headers })
    ).json().data;
    assert.equal(status.configured, false);
    const entry = await lastAudit(t.app, account.id, 'connector.credentials_deleted');
    assert.deepEqual(entry.metadata, {
      credType: 'bearer_token',
      reason: 'path_changed',
      fromOrigin: new URL(prod.url).origin,
      toOrigin: new URL(prod.url).origin,
      fromTarget: `${new URL(prod.url).origin}${new URL(prod.url).pathname}`,
      toTarget: elsewhere,
    });
    const seen = prod.requests.length;
    await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: mallory });
    assert.ok(prod.requests.length > seen, 'the test reached the host');
    assert.equal(sentTo(prod, secret), 0, 'without the owner’s token');
  });

  it('refuses to send a bound credential to another origin, even if the url changed behind the API', async () => {
    const { owner } = await makeTeam(t.app);
    const h = owner.headers;
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: 'mcp-generic', displayName: 'P', config: { url: prod.url } },
      })
    ).json().data;
    await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: h,
      payload: { credType: 'bearer_token', credentials: { token: 'BOUND-TOKEN-1' } },
    });
    const row = await t.app.kernel.db
      .selectFrom('connector_credentials')
      .selectAll()
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    // Bound to the server: its origin and path (N-L3).
    assert.equal(row.origin, `${new URL(prod.url).origin}${new URL(prod.url).pathname}`);
    const before = evil.requests.length;
    // The url rewritten in the database: the call is refused before any request leaves.
    await t.app.kernel.db
      .updateTable('connector_instances')
      .set({ config: JSON.stringify({ url: evil.url }) })
      .where('id', '=', inst.id)
      .execute();
    const refused = (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h })).json().data;
    assert.equal(refused.healthy, false);
    assert.match(refused.message, /bound to http:\/\/127\.0\.0\.1:\d+\/\S*, not to/);
    const sync = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
    assert.equal(sync.statusCode, 409);
    assert.equal(sync.json().error.code, 'CONFLICT');
    // The origin column rewritten to match: the sealed value no longer opens (origin is in its AAD).
    await t.app.kernel.db
      .updateTable('connector_credentials')
      .set({ origin: new URL(evil.url).origin })
      .where('instance_id', '=', inst.id)
      .execute();
    assert.equal(
      (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h })).json().data.healthy,
      false,
    );
    assert.equal(evil.requests.length, before, 'nothing reached the other origin');
    assert.equal(sentTo(evil, 'BOUND-TOKEN-1'), 0);
  });

  /** The owner's instance at prod with a stored token and synced tools; Mallory is a member. */
  async function prodInstance() {
    const { owner, account, members } = await makeTeam(t.app, ['member']);
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: owner.headers,
        payload: { connectorKey: 'mcp-generic', displayName: 'Prod DB tools', config: { url: prod.url } },
      })
    ).json().data;
    await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: owner.headers,
      payload: { credType: 'bearer_token', credentials: { token: 'SECRET-PROD-TOKEN-123' } },
    });
    const [tool] = (
      await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: owner.headers })
    ).json().data;
    assert.equal(tool.toolKey, 'delete_all');
    assert.equal(tool.requiresApproval, true, 'prod marks it destructive');
    return { owner: owner.headers, account, mallory: members.member.headers, inst, tool };
  }
  const invoke = (
    headers: Record<string, string>,
    instId: string,
    toolId: string,
    input: Record<string, unknown> = {},
  ) =>
    t.inject({ method: 'POST', url: `${C}/instances/${instId}/tools/${toolId}/invoke`, headers, payload: { input } });
  const prodRan = () => prod.calls.filter((c) => c.name === 'delete_all').length;

  it('a sync from a server the member chose never lifts the approval gate; only an owner/admin lowers it', async () => {
    const { owner, mallory, inst, tool } = await prodInstance();
    const ranBefore = prodRan();
    assert.equal((await invoke(mallory, inst.id, tool.id)).statusCode, 202);
    // Mallory syncs the same tool from his own server, which does not call it destructive.
    assert.equal(
      (
        await t.inject({
          method: 'PATCH',
          url: `${C}/instances/${inst.id}`,
          headers: mallory,
          payload: { config: { url: evil.url } },
        })
      ).statusCode,
      200,
    );
    const resynced = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: mallory });
    assert.equal(resynced.statusCode, 200);
    assert.equal(resynced.json().data.find((x: { id: string }) => x.id === tool.id).requiresApproval, true);
    const row = await t.app.kernel.db
      .selectFrom('connector_tools')
      .select('requires_approval')
      .where('id', '=', tool.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.requires_approval, 1);
    // Evil's definition is held for review: the tool does not run meanwhile (N-M2).
    assert.equal((await invoke(mallory, inst.id, tool.id)).json().error.code, 'CONFLICT');
    // Back to prod, synced: the accepted definition again, the call still waits for an approver
    // and prod runs nothing.
    await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: mallory,
      payload: { config: { url: prod.url } },
    });
    const back = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: mallory });
    assert.equal(back.json().data.find((x: { id: string }) => x.id === tool.id).definitionStatus, 'accepted');
    const again = await invoke(mallory, inst.id, tool.id);
    assert.equal(again.statusCode, 202);
    assert.equal(again.json().data.status, 'pending_approval');
    assert.equal(prodRan(), ranBefore);
    // Lowering the gate is for owners and admins; raising it is for any writer.
    const lowered = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}/tools/${tool.id}`,
      headers: mallory,
      payload: { requiresApproval: false },
    });
    assert.equal(lowered.statusCode, 403);
    assert.equal(lowered.json().error.code, 'FORBIDDEN');
    const byOwner = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}/tools/${tool.id}`,
      headers: owner,
      payload: { requiresApproval: false },
    });
    assert.deepEqual(byOwner.json().data, { id: tool.id, isActive: true, requiresApproval: false, rateLimitRpm: null });
    const raised = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}/tools/${tool.id}`,
      headers: mallory,
      payload: { requiresApproval: true },
    });
    assert.deepEqual(raised.json().data, { id: tool.id, isActive: true, requiresApproval: true, rateLimitRpm: null });
    assert.equal(
      (
        await t.inject({
          method: 'PATCH',
          url: `${C}/instances/${inst.id}/tools/${tool.id}`,
          headers: mallory,
          payload: {},
        })
      ).statusCode,
      400,
    );
  });

  it('an approved call runs only against the instance as it was when asked', async () => {
    const { owner, mallory, inst, tool } = await prodInstance();
    const parked = (await invoke(mallory, inst.id, tool.id, { all: true })).json().data.approval;
    assert.equal(parked.targetOrigin, new URL(prod.url).origin);
    // Mallory points the instance at his server before the owner approves.
    await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: mallory,
      payload: { config: { url: evil.url } },
    });
    const evilBefore = evil.calls.length;
    const decided = await t.inject({ method: 'POST', url: `${C}/approvals/${parked.id}/approve`, headers: owner });
    assert.equal(decided.statusCode, 200);
    assert.equal(decided.json().data.status, 'failed');
    assert.match(
      decided.json().data.result.error,
      /instance or tool changed since this call was asked against http:\/\/127\.0\.0\.1:\d+/,
    );
    assert.equal(evil.calls.length, evilBefore, "the call never reached the member's server");
    // Unchanged instance: the approved call runs once, at prod.
    await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: owner,
      payload: { config: { url: prod.url } },
    });
    const second = (await invoke(mallory, inst.id, tool.id, { all: true })).json().data.approval;
    const ranBefore = prodRan();
    const ok = (await t.inject({ method: 'POST', url: `${C}/approvals/${second.id}/approve`, headers: owner })).json()
      .data;
    assert.equal(ok.status, 'approved');
    assert.equal(prodRan(), ranBefore + 1);
  });

  it('the approver sees the input (secrets masked, size capped) and the target origin; other members do not', async () => {
    const bank = await startModernMcpServer({
      tools: [
        {
          name: 'transfer',
          inputSchema: {
            type: 'object',
            properties: {
              to: { type: 'string' },
              amount: { type: 'number' },
              note: { type: 'string' },
              apiToken: { type: 'string', writeOnly: true },
            },
          },
          annotations: { destructiveHint: true },
        },
      ],
    });
    try {
      const { owner, members } = await makeTeam(t.app, ['member', 'analyst']);
      const requester = members.member.headers;
      const inst = (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: owner.headers,
          payload: { connectorKey: 'mcp-generic', displayName: 'Bank', config: { url: bank.url } },
        })
      ).json().data;
      const [tool] = (
        await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: owner.headers })
      ).json().data;
      const asked = await invoke(requester, inst.id, tool.id, {
        to: 'acct-999',
        amount: 1_000_000,
        apiToken: 'INLINE-SECRET-1',
      });
      assert.equal(asked.statusCode, 202);
      const expected = { to: 'acct-999', amount: 1_000_000, apiToken: '[redacted]' };
      assert.deepEqual(asked.json().data.approval.input, expected, 'the requester sees what they asked');
      const listed = (
        await t.inject({ method: 'GET', url: `${C}/approvals?status=pending`, headers: owner.headers })
      ).json().data;
      const mine = listed.find((a: { id: string }) => a.id === asked.json().data.approval.id);
      assert.deepEqual(
        { input: mine.input, inputTruncated: mine.inputTruncated, targetOrigin: mine.targetOrigin },
        { input: expected, inputTruncated: false, targetOrigin: new URL(bank.url).origin },
      );
      assert.ok(!JSON.stringify(listed).includes('INLINE-SECRET-1'));
      // Another member (not the requester, not an approver) sees the approval, not the input.
      const other = (
        await t.inject({ method: 'GET', url: `${C}/approvals?status=pending`, headers: members.analyst.headers })
      )
        .json()
        .data.find((a: { id: string }) => a.id === mine.id);
      assert.equal(other.input, null);
      assert.equal(other.targetOrigin, new URL(bank.url).origin);
      // A large input (N-L6: padding before what matters) keeps every key; the long value is cut.
      const big = (
        await invoke(requester, inst.id, tool.id, { note: 'n'.repeat(40_000), to: 'acct-1', amount: 5 })
      ).json().data.approval;
      assert.equal(big.inputTruncated, true);
      assert.deepEqual({ to: big.input.to, amount: big.input.amount }, { to: 'acct-1', amount: 5 });
      assert.match(big.input.note, /^n+…\[cut [\d,]+ characters\]$/);
      assert.deepEqual(big.inputCut, [{ path: 'note', kind: 'string', originalLength: 40_000 }]);
      const decided = (
        await t.inject({ method: 'POST', url: `${C}/approvals/${mine.id}/approve`, headers: owner.headers })
      ).json().data;
      assert.equal(decided.status, 'approved');
      assert.deepEqual(decided.input, expected);
      assert.deepEqual(bank.calls.at(-1), {
        name: 'transfer',
        args: { to: 'acct-999', amount: 1_000_000, apiToken: 'INLINE-SECRET-1' },
      });
    } finally {
      await bank.close();
    }
  });

  it('an approval is bound to the tool schema the approver was shown: a sync that masks a field fails it', async () => {
    const bank = await startModernMcpServer({
      tools: [
        {
          name: 'transfer',
          inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } } },
          annotations: { destructiveHint: true },
        },
      ],
    });
    try {
      const { owner, members } = await makeTeam(t.app, ['member']);
      const inst = (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: owner.headers,
          payload: { connectorKey: 'mcp-generic', displayName: 'Bank', config: { url: bank.url } },
        })
      ).json().data;
      const [tool] = (
        await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: owner.headers })
      ).json().data;
      const asked = (await invoke(members.member.headers, inst.id, tool.id, { to: 'acct-666', amount: 5 })).json().data
        .approval;
      // The server now marks the payee writeOnly; the next sync holds that schema, and an owner
      // accepts it (docs/connectors.md, Tool definitions).
      bank.options.tools[0].inputSchema = {
        type: 'object',
        properties: { to: { type: 'string', writeOnly: true }, amount: { type: 'number' } },
      };
      assert.equal(
        (
          await t.inject({
            method: 'POST',
            url: `${C}/instances/${inst.id}/sync-tools`,
            headers: members.member.headers,
          })
        ).statusCode,
        200,
      );
      const accepted = await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/tools/${tool.id}/accept-definition`,
        headers: owner.headers,
      });
      assert.equal(accepted.statusCode, 200, accepted.body);
      const shown = (await t.inject({ method: 'GET', url: `${C}/approvals?status=pending`, headers: owner.headers }))
        .json()
        .data.find((a: { id: string }) => a.id === asked.id);
      assert.equal(shown.input.to, '[redacted]');
      const calls = bank.calls.length;
      const decided = (
        await t.inject({ method: 'POST', url: `${C}/approvals/${asked.id}/approve`, headers: owner.headers })
      ).json().data;
      assert.equal(decided.status, 'failed');
      assert.match(decided.result.error, /instance or tool changed since this call was asked/);
      assert.equal(bank.calls.length, calls, 'nothing was sent');
    } finally {
      await bank.close();
    }
  });

  it("custom definition keys are per workspace: another tenant's key is neither revealed nor able to block the operator", async () => {
    const alice = await makeTeam(t.app);
    const carol = await makeTeam(t.app);
    const key = `jira-${Date.now()}`;
    const define = (headers: Record<string, string>, name: string) =>
      t.inject({ method: 'POST', url: `${C}/definitions`, headers, payload: { key, name } });
    assert.equal((await define(alice.owner.headers, 'Alice Jira')).statusCode, 201);
    const carols = await define(carol.owner.headers, 'Carol Jira');
    assert.equal(carols.statusCode, 201, 'no 409 that would reveal the other tenant');
    const again = await define(alice.owner.headers, 'Alice Jira 2');
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error.code, 'CONFLICT');
    const named = async (headers: Record<string, string>) =>
      (await t.inject({ method: 'GET', url: `${C}/definitions`, headers }))
        .json()
        .data.filter((d: { key: string }) => d.key === key)
        .map((d: { name: string; isSystem: boolean }) => [d.name, d.isSystem]);
    assert.deepEqual(await named(alice.owner.headers), [['Alice Jira', false]]);
    assert.deepEqual(await named(carol.owner.headers), [['Carol Jira', false]]);
    // The operator defines the same key: it works, and each tenant keeps its own meaning.
    const res = await cli(
      [
        'connector',
        'define',
        '--key',
        key,
        '--name',
        'Operator Jira',
        '--auth',
        'oauth2',
        '--authorize-url',
        'https://id.jira.test/a',
        '--token-url',
        'https://id.jira.test/t',
        '--client-id',
        'c',
        '--client-secret',
        'operator-secret-1',
        '--json',
      ],
      { dataDir: t.dataDir },
    );
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(await named(alice.owner.headers), [['Alice Jira', false]]);
    const inst = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: alice.owner.headers,
      payload: { connectorKey: key, displayName: 'J' },
    });
    assert.equal(inst.statusCode, 201);
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: `${C}/instances/${inst.json().data.id}/oauth/initiate`,
          headers: alice.owner.headers,
        })
      ).statusCode,
      409,
      "Alice's custom definition, not the operator's OAuth one",
    );
    // A tenant without its own sees the operator's, and cannot take the key (system keys are public).
    const dave = await makeTeam(t.app);
    assert.deepEqual(await named(dave.owner.headers), [['Operator Jira', true]]);
    const taken = await define(dave.owner.headers, 'Dave Jira');
    assert.equal(taken.statusCode, 409);
    assert.match(taken.json().error.message, /system connector/);
    const second = await cli(
      [
        'connector',
        'define',
        '--key',
        key,
        '--name',
        'Again',
        '--auth',
        'oauth2',
        '--authorize-url',
        'https://id.jira.test/a',
        '--token-url',
        'https://id.jira.test/t',
        '--client-id',
        'c',
        '--client-secret',
        's',
        '--json',
      ],
      { dataDir: t.dataDir },
    );
    assert.equal(second.code, 2);
  });
});
