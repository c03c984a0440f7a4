import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { lastAudit } from '../helpers/accounts.js';
import { startLegacyMcpServer, type FakeTool, type McpFake } from '../helpers/mcp-servers.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;
type Tool = { id: string; toolKey: string; requiresApproval: boolean; rateLimitRpm: number | null };

const serverTools = (): FakeTool[] => [
  { name: 'drop_table', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } },
  { name: 'read_rows', inputSchema: { type: 'object' } },
  { name: 'fresh', inputSchema: { type: 'object' } },
];

describe('tool settings: requiresApproval and rateLimitRpm', () => {
  let t: App;
  let fake: McpFake;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    fake = await startLegacyMcpServer({ tools: serverTools() });
  });
  after(async () => {
    await fake.close();
    await t.close();
  });

  async function synced() {
    const { owner, account, members } = await makeTeam(t.app, ['member']);
    const h = owner.headers;
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: 'mcp-generic', displayName: 'DB', config: { url: fake.url } },
      })
    ).json().data;
    const list: Tool[] = (
      await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h })
    ).json().data;
    const tool = (key: string) => list.find((x) => x.toolKey === key)!;
    return { h, member: members.member.headers, account, inst, tool };
  }
  const patch = (headers: Record<string, string>, instId: string, toolId: string, payload: Record<string, unknown>) =>
    t.inject({ method: 'PATCH', url: `${C}/instances/${instId}/tools/${toolId}`, headers, payload });
  const listTools = async (headers: Record<string, string>, instId: string): Promise<Tool[]> =>
    (await t.inject({ method: 'GET', url: `${C}/instances/${instId}/tools`, headers })).json().data;

  it('an owner sets and clears rateLimitRpm; the answer and the Tool show both settings; audited', async () => {
    const { h, account, inst, tool } = await synced();
    const read = tool('read_rows');
    const set = await patch(h, inst.id, read.id, { rateLimitRpm: 30 });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json().data, { id: read.id, isActive: true, requiresApproval: false, rateLimitRpm: 30 });
    const shown = (await listTools(h, inst.id)).find((x) => x.id === read.id)!;
    assert.equal(shown.rateLimitRpm, 30);
    assert.equal(shown.requiresApproval, false);
    const entry = await lastAudit(t.app, account.id, 'connector.tool_toggled');
    assert.equal(entry.targetId, read.id);
    assert.deepEqual(entry.metadata, { instanceId: inst.id, rateLimitRpm: 30 });
    const both = await patch(h, inst.id, read.id, { rateLimitRpm: null, requiresApproval: true, enabled: false });
    assert.deepEqual(both.json().data, { id: read.id, isActive: false, requiresApproval: true, rateLimitRpm: null });
    assert.deepEqual((await lastAudit(t.app, account.id, 'connector.tool_toggled')).metadata, {
      instanceId: inst.id,
      rateLimitRpm: null,
      requiresApproval: true,
      enabled: false,
    });
  });

  it('a member may enable and raise the gate; changing rateLimitRpm or lowering the gate is 403', async () => {
    const { h, member, inst, tool } = await synced();
    const drop = tool('drop_table');
    const read = tool('read_rows');
    assert.equal(drop.requiresApproval, true, 'the server marks it destructive');
    for (const payload of [{ rateLimitRpm: 5 }, { requiresApproval: false }, { enabled: true, rateLimitRpm: 1 }]) {
      const target = 'requiresApproval' in payload ? drop : read;
      const res = await patch(member, inst.id, target.id, payload);
      assert.equal(res.statusCode, 403, JSON.stringify(payload));
      assert.equal(res.json().error.code, 'FORBIDDEN');
    }
    const unchanged = await listTools(h, inst.id);
    assert.equal(unchanged.find((x) => x.id === read.id)!.rateLimitRpm, null);
    assert.equal(unchanged.find((x) => x.id === drop.id)!.requiresApproval, true);
    const raised = await patch(member, inst.id, read.id, { requiresApproval: true });
    assert.deepEqual(raised.json().data, { id: read.id, isActive: true, requiresApproval: true, rateLimitRpm: null });
    // Sending the value the tool already has changes nothing, so it is no owner decision.
    const same = await patch(member, inst.id, read.id, { enabled: false, rateLimitRpm: null });
    assert.equal(same.statusCode, 200, same.body);
    assert.equal(same.json().data.isActive, false);
  });

  it('refuses bad values with 400 VALIDATION_FAILED naming rateLimitRpm', async () => {
    const { h, inst, tool } = await synced();
    const read = tool('read_rows');
    for (const rateLimitRpm of [0, -1, 1.5, 'ten', 100_001, true, {}]) {
      const res = await patch(h, inst.id, read.id, { rateLimitRpm });
      assert.equal(res.statusCode, 400, `${JSON.stringify(rateLimitRpm)}: ${res.body}`);
      assert.equal(res.json().error.code, 'VALIDATION_FAILED');
      assert.ok(res.json().error.details.some((d: { field: string }) => d.field === 'rateLimitRpm'));
    }
    const empty = await patch(h, inst.id, read.id, {});
    assert.equal(empty.statusCode, 400);
    assert.equal((await listTools(h, inst.id)).find((x) => x.id === read.id)!.rateLimitRpm, null);
  });

  it('a later sync keeps what a person chose and still follows the server for the rest', async () => {
    const { h, member, inst, tool } = await synced();
    const drop = tool('drop_table');
    const read = tool('read_rows');
    const fresh = tool('fresh');
    assert.equal((await patch(h, inst.id, drop.id, { requiresApproval: false, rateLimitRpm: 12 })).statusCode, 200);
    assert.equal((await patch(member, inst.id, read.id, { requiresApproval: true })).statusCode, 200);
    // The server now calls every tool destructive but read_rows, which it calls harmless.
    fake.options.tools = serverTools().map((x) => ({
      ...x,
      annotations: { destructiveHint: x.name !== 'read_rows' },
    }));
    try {
      const again: Tool[] = (
        await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: member })
      ).json().data;
      const byId = new Map(again.map((x) => [x.id, x]));
      assert.equal(byId.get(drop.id)!.requiresApproval, false, "the owner's lowered gate stays lowered");
      assert.equal(byId.get(drop.id)!.rateLimitRpm, 12);
      assert.equal(byId.get(read.id)!.requiresApproval, true, "the member's raised gate stays raised");
      assert.equal(byId.get(fresh.id)!.requiresApproval, true, 'untouched tools follow the server upwards');
    } finally {
      fake.options.tools = serverTools();
    }
  });

  it('after a config change, syncs may raise a gate a person lowered again (the rate limit stays)', async () => {
    const { h, member, inst, tool } = await synced();
    const drop = tool('drop_table');
    await patch(h, inst.id, drop.id, { requiresApproval: false, rateLimitRpm: 9 });
    const sync = async () =>
      (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: member }))
        .json()
        .data.find((x: Tool) => x.id === drop.id) as Tool;
    assert.equal((await sync()).requiresApproval, false, 'same config: the choice holds');
    // Another path on the same origin keeps the credentials, but may serve another drop_table.
    const moved = await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${inst.id}`,
      headers: member,
      payload: { config: { url: `${fake.url}?tenant=other` } },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    const after = await sync();
    assert.equal(after.requiresApproval, true, 'the server calls it destructive: gated again');
    assert.equal(after.rateLimitRpm, 9);
  });

  it('the rate limit set here is the one invoke enforces', async () => {
    const { h, inst, tool } = await synced();
    const read = tool('read_rows');
    await patch(h, inst.id, read.id, { rateLimitRpm: 1 });
    const invoke = () =>
      t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/tools/${read.id}/invoke`, headers: h, payload: {} });
    assert.equal((await invoke()).statusCode, 200);
    const limited = await invoke();
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error.code, 'RATE_LIMIT_EXCEEDED');
  });

  it('works the same for manual tools', async () => {
    const { owner, members } = await makeTeam(t.app, ['member']);
    const h = owner.headers;
    const key = `crm-${Date.now()}`;
    await t.inject({ method: 'POST', url: `${C}/definitions`, headers: h, payload: { key, name: 'CRM' } });
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: key, displayName: 'CRM' },
      })
    ).json().data;
    const created = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools`,
      headers: h,
      payload: {
        toolKey: 'wipe',
        displayName: 'Wipe',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
        requiresApproval: true,
        rateLimitRpm: 3,
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id;
    assert.equal((await patch(members.member.headers, inst.id, id, { rateLimitRpm: 4 })).statusCode, 403);
    assert.equal((await patch(members.member.headers, inst.id, id, { requiresApproval: false })).statusCode, 403);
    const res = await patch(h, inst.id, id, { rateLimitRpm: 4, requiresApproval: false });
    assert.deepEqual(res.json().data, { id, isActive: true, requiresApproval: false, rateLimitRpm: 4 });
  });
});
