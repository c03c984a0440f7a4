import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, storedText } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';

type App = ReturnType<typeof withJson>;
import { makeTeam, signedInUser } from '../helpers/factories.js';
import { addMember } from '../helpers/tenancy.js';
import { openCredentials } from '../../src/connectors/credentials.js';
import { startLegacyMcpServer, type McpFake } from '../helpers/mcp-servers.js';

const C = '/api/v1/connectors';

describe('connector instances and credentials', () => {
  let t: App;
  let strict: App;
  let mcp: McpFake;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    strict = withJson(await createTestApp());
    mcp = await startLegacyMcpServer({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
  });
  after(async () => {
    await mcp.close();
    await t.close();
    await strict.close();
  });

  async function team(app = t) {
    const { owner, account, members } = await makeTeam(app.app, ['viewer', 'member']);
    return { owner, account, members, h: owner.headers };
  }
  const create = (headers: Record<string, string>, payload: Record<string, unknown>, app = t) =>
    app.inject({ method: 'POST', url: `${C}/instances`, headers, payload });

  it('lists the built-in definitions and creates custom ones validated as JSON Schema', async () => {
    const { h } = await team();
    const list = await t.inject({ method: 'GET', url: `${C}/definitions`, headers: h });
    assert.equal(list.statusCode, 200);
    const keys = list.json().data.map((d: { key: string }) => d.key);
    assert.ok(keys.includes('mcp-generic') && keys.includes('github'));
    const bad = await t.inject({
      method: 'POST',
      url: `${C}/definitions`,
      headers: h,
      payload: { key: 'bad-schema', name: 'Bad', configSchema: { type: 'no-such-type' } },
    });
    assert.equal(bad.statusCode, 400);
    assert.ok(bad.json().error.details.length > 0);
    const ok = await t.inject({
      method: 'POST',
      url: `${C}/definitions`,
      headers: h,
      payload: {
        key: `crm-${Date.now()}`,
        name: 'CRM',
        credType: 'api_key',
        configSchema: {
          type: 'object',
          required: ['region'],
          properties: { region: { type: 'string', enum: ['eu', 'us'] } },
        },
      },
    });
    assert.equal(ok.statusCode, 201);
    assert.equal(ok.json().data.isSystem, false);
    // Config is validated against the definition's schema; failures list the paths.
    const invalid = await create(h, {
      connectorKey: ok.json().data.key,
      displayName: 'x',
      config: { region: 'mars', extra: 1 },
    });
    assert.equal(invalid.statusCode, 400);
    assert.ok(invalid.json().error.details.some((d: { field: string }) => d.field === 'config.region'));
    // Another workspace does not see the custom definition.
    const other = await team();
    const hidden = await create(other.h, {
      connectorKey: ok.json().data.key,
      displayName: 'x',
      config: { region: 'eu' },
    });
    assert.equal(hidden.statusCode, 400);
  });

  it('creates, lists, reads, updates and deletes instances with the documented status moves', async () => {
    const { h } = await team();
    const res = await create(h, { connectorKey: 'mcp-generic', displayName: 'Tools', config: { url: mcp.url } });
    assert.equal(res.statusCode, 201);
    const inst = res.json().data;
    assert.equal(inst.status, 'pending_auth');
    assert.equal(inst.enabled, true);
    assert.deepEqual(inst.config, { url: mcp.url });
    const got = await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h });
    assert.equal(got.json().data.id, inst.id);
    // PATCH enabled false -> inactive
    const off = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: h,
      payload: { enabled: false, displayName: 'Renamed' },
    });
    assert.equal(off.json().data.status, 'inactive');
    assert.equal(off.json().data.displayName, 'Renamed');
    // A test while disabled reports health but the instance stays inactive.
    const whileOff = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h });
    assert.equal(whileOff.json().data.healthy, true);
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data.status,
      'inactive',
    );
    // enabling again moves nothing; the next test does: healthy -> active
    const on = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: h,
      payload: { enabled: true },
    });
    assert.equal(on.json().data.status, 'inactive');
    const test = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h });
    assert.equal(test.json().data.healthy, true);
    assert.equal(typeof test.json().data.latencyMs, 'number');
    const after1 = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data;
    assert.equal(after1.status, 'active');
    assert.ok(after1.lastHealthCheck);
    // Unhealthy test -> error with the message
    await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: h,
      payload: { config: { url: 'http://127.0.0.1:1/mcp' } },
    });
    const bad = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h });
    assert.equal(bad.json().data.healthy, false);
    assert.ok(bad.json().data.message);
    const after2 = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data;
    assert.equal(after2.status, 'error');
    assert.equal(after2.healthMessage, bad.json().data.message);
    // Credentials deleted -> pending_auth
    await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: h,
      payload: { credType: 'bearer_token', credentials: { token: 'tkn-abc' } },
    });
    const del = await t.inject({ method: 'DELETE', url: `${C}/instances/${inst.id}/credentials`, headers: h });
    assert.equal(del.statusCode, 200);
    assert.equal(del.json().data.instanceId, inst.id);
    assert.equal(
      (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data.status,
      'pending_auth',
    );
    // DELETE removes the instance, its credentials and tools
    await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: h,
      payload: { credType: 'bearer_token', credentials: { token: 'tkn-abc' } },
    });
    await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: h,
      payload: { config: { url: mcp.url } },
    });
    await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
    const gone = await t.inject({ method: 'DELETE', url: `${C}/instances/${inst.id}`, headers: h });
    assert.equal(gone.json().data.id, inst.id);
    const db = t.app.kernel.db;
    assert.equal(
      (await db.selectFrom('connector_credentials').selectAll().where('instance_id', '=', inst.id).execute()).length,
      0,
    );
    assert.equal(
      (await db.selectFrom('connector_tools').selectAll().where('instance_id', '=', inst.id).execute()).length,
      0,
    );
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).statusCode, 404);
    const audit = await db.selectFrom('account_audit_log').select('action').where('target_id', '=', inst.id).execute();
    assert.ok(audit.some((a) => a.action === 'connector.deleted'));
  });

  it('pages with limit up to 100 and meta; malformed ids are 422; another workspace is 404', async () => {
    const a = await team();
    for (let i = 0; i < 3; i++)
      await create(a.h, { connectorKey: 'mcp-generic', displayName: `i${i}`, config: { url: mcp.url } });
    const page = await t.inject({ method: 'GET', url: `${C}/instances?limit=2&offset=1`, headers: a.h });
    assert.equal(page.json().data.length, 2);
    assert.deepEqual(
      { ...page.json().meta, requestId: undefined, durationMs: undefined },
      { total: 3, limit: 2, offset: 1, hasNextPage: false, requestId: undefined, durationMs: undefined },
    );
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances?limit=100`, headers: a.h })).statusCode, 200);
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances?limit=101`, headers: a.h })).statusCode, 400);
    const bad = await t.inject({ method: 'GET', url: `${C}/instances/not-a-uuid`, headers: a.h });
    assert.equal(bad.statusCode, 422);
    const id = page.json().data[0].id;
    const b = await team();
    for (const [method, url] of [
      ['GET', `${C}/instances/${id}`],
      ['PATCH', `${C}/instances/${id}`],
      ['DELETE', `${C}/instances/${id}`],
      ['GET', `${C}/instances/${id}/tools`],
      ['GET', `${C}/instances/${id}/credentials/status`],
      ['POST', `${C}/instances/${id}/oauth/initiate`],
    ] as const) {
      const res = await t.inject({
        method,
        url,
        headers: b.h,
        payload: method === 'PATCH' ? { displayName: 'stolen' } : undefined,
      });
      assert.equal(res.statusCode, 404, `${method} ${url}`);
    }
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances`, headers: b.h })).json().meta.total, 0);
  });

  it('refuses writes to viewers and in suspended accounts, reads still work', async () => {
    const { h, account, members } = await team();
    const inst = (await create(h, { connectorKey: 'mcp-generic', displayName: 'x', config: { url: mcp.url } })).json()
      .data;
    const viewer = await create(members.viewer.headers, {
      connectorKey: 'mcp-generic',
      displayName: 'x',
      config: { url: mcp.url },
    });
    assert.equal(viewer.statusCode, 403);
    assert.equal(
      (
        await create(members.member.headers, {
          connectorKey: 'mcp-generic',
          displayName: 'm',
          config: { url: mcp.url },
        })
      ).statusCode,
      201,
    );
    await t.app.kernel.db.updateTable('accounts').set({ status: 'suspended' }).where('id', '=', account.id).execute();
    const refused = await create(h, { connectorKey: 'mcp-generic', displayName: 'x', config: { url: mcp.url } });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error.code, 'ACCOUNT_SUSPENDED');
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: `${C}/instances/${inst.id}/credentials`,
          headers: h,
          payload: { credType: 'api_key', credentials: { apiKey: 'k' } },
        })
      ).json().error.code,
      'ACCOUNT_SUSPENDED',
    );
    assert.equal((await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).statusCode, 200);
  });

  it('requires the keys of every credType, seals them, and never returns or logs them', async () => {
    const { h } = await team();
    const inst = (await create(h, { connectorKey: 'mcp-generic', displayName: 'c', config: { url: mcp.url } })).json()
      .data;
    const cases: Array<[string, Record<string, string>, string[]]> = [
      ['oauth2', { access_token: 'secret-oauth-access-1' }, ['access_token']],
      ['api_key', { apiKey: 'secret-api-key-2' }, ['apiKey']],
      ['basic_auth', { username: 'u', password: 'secret-basic-pass-3' }, ['username', 'password']],
      ['bearer_token', { token: 'secret-bearer-4' }, ['token']],
      ['connection_string', { connectionString: 'postgres://secret-conn-5' }, ['connectionString']],
      ['custom', { anything: 'secret-custom-6' }, []],
    ];
    for (const [credType, credentials, requiredKeys] of cases) {
      for (const k of requiredKeys) {
        const missing = { ...credentials };
        delete missing[k];
        const res = await t.inject({
          method: 'POST',
          url: `${C}/instances/${inst.id}/credentials`,
          headers: h,
          payload: { credType, credentials: missing },
        });
        assert.equal(res.statusCode, 400, `${credType} without ${k}`);
        assert.ok(res.json().error.details.some((d: { field: string }) => d.field === `credentials.${k}`));
      }
      const ok = await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/credentials`,
        headers: h,
        payload: { credType, credentials, scopes: credType === 'oauth2' ? ['a', 'b'] : undefined },
      });
      assert.equal(ok.statusCode, 200, credType);
      assert.deepEqual(Object.keys(ok.json().data).sort(), ['credType', 'id', 'instanceId', 'rotatedAt']);
      assert.ok(!ok.body.includes(Object.values(credentials).at(-1)!));
      const status = (
        await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/credentials/status`, headers: h })
      ).json().data;
      assert.equal(status.configured, true);
      assert.equal(status.credType, credType);
      assert.deepEqual(status.scopes, credType === 'oauth2' ? ['a', 'b'] : null);
    }
    const emptyCustom = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/credentials`,
      headers: h,
      payload: { credType: 'custom', credentials: {} },
    });
    assert.equal(emptyCustom.statusCode, 400);
    // Raw database file and logs never hold a credential in clear.
    const raw = await storedText(t.app);
    for (const [, credentials] of cases)
      for (const v of Object.values(credentials))
        if (v.startsWith('secret') || v.includes('secret')) assert.ok(!raw.includes(v), `db holds ${v}`);
    assert.ok(!t.logs.join('\n').includes('secret-custom-6'));
    // Tampered ciphertext is detected; a value moved to another instance fails too.
    const row = await t.app.kernel.db
      .selectFrom('connector_credentials')
      .selectAll()
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    const parts = row.sealed_value.split('.');
    const flipped = Buffer.from(parts[4], 'base64url');
    flipped[0] ^= 1;
    parts[4] = flipped.toString('base64url');
    assert.throws(
      () => openCredentials(t.app.kernel.secrets, inst.id, row.cred_type, parts.join('.'), row.origin),
      /failed authentication/,
    );
    assert.throws(
      () =>
        openCredentials(
          t.app.kernel.secrets,
          '00000000-0000-4000-8000-000000000000',
          row.cred_type,
          row.sealed_value,
          row.origin,
        ),
      /failed authentication/,
    );
    assert.equal(
      openCredentials(t.app.kernel.secrets, inst.id, row.cred_type, row.sealed_value, row.origin).anything,
      'secret-custom-6',
    );
  });

  it('keeps credentials out of the MCP config: credential headers are refused, others pass', async () => {
    const { owner } = await makeTeam(t.app);
    for (const name of ['Authorization', 'authorization', 'X-API-Key', 'Cookie', 'Proxy-Authorization']) {
      const res = await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: owner.headers,
        payload: {
          connectorKey: 'mcp-generic',
          displayName: 'M',
          config: { url: 'https://mcp.example.test/mcp', headers: { [name]: 'Bearer secret-123' } },
        },
      });
      assert.equal(res.statusCode, 400, name);
      assert.match(JSON.stringify(res.json().error.details), /headers/, name);
    }
    const ok = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: owner.headers,
      payload: {
        connectorKey: 'mcp-generic',
        displayName: 'M',
        config: { url: 'https://mcp.example.test/mcp', headers: { 'X-Tenant': 'acme' } },
      },
    });
    assert.equal(ok.statusCode, 201);
  });

  it('refuses MCP URLs resolving to loopback, private, link-local or metadata addresses', async () => {
    const { h } = await team(strict);
    for (const url of [
      'http://127.0.0.1:9/mcp',
      'http://localhost/mcp',
      'http://10.1.2.3/mcp',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/mcp',
      'http://[fe80::1]/',
      'http://172.16.0.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::127.0.0.1]:18471/mcp',
      'http://[64:ff9b::7f00:1]:18471/mcp',
      'http://[2002:7f00:1::1]:18471/mcp',
      'file:///etc/passwd',
    ]) {
      const res = await create(h, { connectorKey: 'mcp-generic', displayName: 'x', config: { url } }, strict);
      assert.equal(res.statusCode, 400, url);
      if (url.startsWith('http')) assert.equal(res.json().error.code, 'VALIDATION_FAILED', url);
    }
  });

  it('keeps a workspace member of another account out', async () => {
    const a = await team();
    const stranger = await signedInUser(t.app);
    const inst = (await create(a.h, { connectorKey: 'mcp-generic', displayName: 'x', config: { url: mcp.url } })).json()
      .data;
    const ws = await t.app.kernel.db
      .selectFrom('workspaces')
      .select('id')
      .where('account_id', '=', a.account.id)
      .executeTakeFirstOrThrow();
    const res = await t.inject({
      method: 'GET',
      url: `${C}/instances/${inst.id}`,
      headers: { ...stranger.headers, 'x-workspace-id': ws.id },
    });
    assert.equal(res.statusCode, 404);
    await addMember(t.app, a.account.id, stranger.user.id, 'viewer');
    assert.equal(
      (
        await t.inject({
          method: 'GET',
          url: `${C}/instances/${inst.id}`,
          headers: { ...stranger.headers, 'x-workspace-id': ws.id },
        })
      ).statusCode,
      200,
    );
  });
});
