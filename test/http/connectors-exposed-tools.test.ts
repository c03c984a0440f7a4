import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { startLegacyMcpServer, type FakeTool, type McpFake } from '../helpers/mcp-servers.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;
type Headers = Record<string, string>;

const LONG_KEY = 'summarize_every_open_pull_request_in_the_repository_by_author';
const SCHEMA_2020 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { pos: { type: 'integer', minimum: 1 } },
  properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { $ref: '#/$defs/pos' }], items: false } },
  required: ['pair'],
};
const tool = (name: string, extra: Partial<FakeTool> = {}): FakeTool => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object' },
  ...extra,
});
const hash6 = (instanceId: string, toolKey: string) =>
  createHash('sha256').update(`${instanceId}\n${toolKey}`).digest('hex').slice(0, 6);

describe('the workspace tools served over MCP (connectors.tools.listExposed)', () => {
  let t: App;
  let github: McpFake;
  let search: McpFake;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    github = await startLegacyMcpServer({
      tools: [
        tool('create_issue', { annotations: { readOnlyHint: false, destructiveHint: true, title: 'New issue' } }),
        tool('list_issues', { annotations: { readOnlyHint: true } }),
        tool(LONG_KEY),
        tool('pair', { inputSchema: SCHEMA_2020 }),
        tool('weird:name/with spaces'),
        tool('gone'),
      ],
    });
    search = await startLegacyMcpServer({ tools: [tool('search'), tool('fetch')] });
  });
  after(async () => {
    await github.close();
    await search.close();
    await t.close();
  });

  /** An instance synced and tested (so active), as an owner does it through the API. */
  async function instance(h: Headers, url: string, payload: Record<string, unknown>) {
    const res = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: h,
      payload: { connectorKey: 'mcp-generic', config: { url }, ...payload },
    });
    assert.equal(res.statusCode, 201, res.body);
    const inst = res.json().data;
    const tools = (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h })).json()
      .data as Array<{ id: string; toolKey: string }>;
    const test = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h });
    assert.equal(test.json().data.healthy, true, test.body);
    return { id: inst.id as string, tool: (key: string) => tools.find((x) => x.toolKey === key)!.id };
  }
  const wsOf = (userId: string) =>
    t.app.services.accounts.access.workspace(
      { userId, kind: 'session', scopes: null, clientId: null, sessionId: null, accountId: null, tokenId: null },
      {},
    );

  async function workspace() {
    const team = await makeTeam(t.app);
    const h = team.owner.headers;
    const gh = await instance(h, github.url, { displayName: 'GitHub Tools (prod)' });
    const a = await instance(h, search.url, { displayName: 'Search A', toolPrefix: '' });
    const b = await instance(h, search.url, { displayName: 'Search B', toolPrefix: '' });
    const ws = await wsOf(team.owner.user.id);
    return { h, gh, a, b, ws };
  }

  it('names tools {prefix}{toolKey}, hashes long and colliding names, sorted and stable', async () => {
    const { gh, a, b, ws } = await workspace();
    const { listExposed } = t.app.services.connectors.tools;
    const catalog = await listExposed(ws);
    const names = catalog.map((x) => x.name);
    assert.deepEqual(names, [...names].sort(), 'sorted by exposed name');
    assert.equal(new Set(names).size, names.length, 'unique');
    for (const name of names) {
      assert.match(name, /^[A-Za-z0-9_.-]{1,64}$/);
      assert.ok(name.length <= 40, name);
    }
    const byKey = (instanceId: string, key: string) =>
      catalog.find((x) => x.instanceId === instanceId && x.toolKey === key)!;
    // Derived prefix: the display name slugified, then "__".
    assert.equal(byKey(gh.id, 'create_issue').name, 'github_tools_prod__create_issue');
    assert.equal(byKey(gh.id, 'list_issues').name, 'github_tools_prod__list_issues');
    // Characters MCP names may not hold become "_"; 41 characters then: shortened and hashed.
    const weird = byKey(gh.id, 'weird:name/with spaces').name;
    assert.equal(weird, `github_tools_prod__weird_name_wit_${hash6(gh.id, 'weird:name/with spaces')}`);
    // Over 40: shortened, with a hash of instance id and tool key.
    const long = byKey(gh.id, LONG_KEY).name;
    assert.ok(long.startsWith('github_tools_prod__summarize'), long);
    assert.ok(long.endsWith(`_${hash6(gh.id, LONG_KEY)}`), long);
    // Prefix '': the tools keep their names unless another tool has the same name; then every
    // tool of the clash is hashed, each differently.
    for (const key of ['search', 'fetch']) {
      const [x, y] = [byKey(a.id, key).name, byKey(b.id, key).name];
      assert.equal(x, `${key}_${hash6(a.id, key)}`);
      assert.equal(y, `${key}_${hash6(b.id, key)}`);
      assert.notEqual(x, y);
    }
    assert.deepEqual(await listExposed(ws), catalog, 'stable across calls');
  });

  it('passes schemas and annotations through and carries the settings', async () => {
    const { h, gh, ws } = await workspace();
    const catalog = await t.app.services.connectors.tools.listExposed(ws);
    const pair = catalog.find((x) => x.toolId === gh.tool('pair'))!;
    assert.deepEqual(pair.inputSchema, SCHEMA_2020);
    assert.equal(pair.description, 'pair tool');
    assert.equal(pair.annotations, null);
    assert.equal(pair.outputSchema, null);
    const create = catalog.find((x) => x.toolId === gh.tool('create_issue'))!;
    assert.deepEqual(create.annotations, { readOnlyHint: false, destructiveHint: true, title: 'New issue' });
    assert.equal(create.requiresApproval, true);
    assert.equal(create.rateLimitRpm, null);
    await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${gh.id}/tools/${gh.tool('list_issues')}`,
      headers: h,
      payload: { rateLimitRpm: 7, requiresApproval: true },
    });
    const list = (await t.app.services.connectors.tools.findExposed(ws, 'github_tools_prod__list_issues')).tool!;
    assert.equal(list.toolId, gh.tool('list_issues'));
    assert.equal(list.instanceId, gh.id);
    assert.equal(list.rateLimitRpm, 7);
    assert.equal(list.requiresApproval, true);
  });

  it('leaves out disabled tools, disabled or not active instances, and other workspaces', async () => {
    const { h, gh, a, b, ws } = await workspace();
    const { listExposed, findExposed } = t.app.services.connectors.tools;
    const before = await listExposed(ws);
    await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${gh.id}/tools/${gh.tool('list_issues')}`,
      headers: h,
      payload: { enabled: false },
    });
    await t.inject({ method: 'PATCH', url: `${C}/instances/${b.id}`, headers: h, payload: { enabled: false } });
    // Synced but never tested: pending_auth, not active.
    const pending = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: 'mcp-generic', displayName: 'Pending', config: { url: search.url } },
      })
    ).json().data;
    await t.inject({ method: 'POST', url: `${C}/instances/${pending.id}/sync-tools`, headers: h });
    const after = await listExposed(ws);
    assert.ok(!after.some((x) => x.toolId === gh.tool('list_issues')));
    assert.ok(!after.some((x) => x.instanceId === b.id || x.instanceId === pending.id));
    assert.equal(after.length, before.length - 3, 'list_issues and b.search, b.fetch');
    // With b gone, a's tools no longer collide: they keep their own names.
    assert.deepEqual(
      after.filter((x) => x.instanceId === a.id).map((x) => x.name),
      ['fetch', 'search'],
    );
    assert.equal((await findExposed(ws, 'github_tools_prod__list_issues')).tool, null);
    // Another workspace with the same servers sees only its own instances, and cannot find ours.
    const other = await workspace();
    const theirs = await listExposed(other.ws);
    const ours = new Set([gh.id, a.id, b.id, pending.id]);
    assert.ok(theirs.length > 0 && theirs.every((x) => !ours.has(x.instanceId)));
    assert.ok(after.every((x) => ![other.gh.id, other.a.id, other.b.id].includes(x.instanceId)));
    assert.equal((await findExposed(other.ws, 'search')).tool, null);
    assert.equal((await findExposed(ws, 'search')).tool!.instanceId, a.id);
  });
});
