import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { startLegacyMcpServer, startModernMcpServer, type FakeTool, type McpFake } from '../helpers/mcp-servers.js';
import { ManualClock } from '../../src/lib/clock.js';

const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;

const tools = (n: number, prefix = 'tool'): FakeTool[] =>
  Array.from({ length: n }, (_, i) => ({
    name: `${prefix}_${i}`,
    description: `Tool ${i}`,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  }));

for (const era of ['2025-11-25', '2026-07-28'] as const) {
  describe(`mcp-generic against a ${era} server`, () => {
    let t: App;
    let fake: McpFake;
    let h: Record<string, string>;
    const start = era === '2025-11-25' ? startLegacyMcpServer : startModernMcpServer;
    before(async () => {
      t = withJson(
        await createTestApp({
          env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' },
          clock: new ManualClock('2026-03-01T00:00:00Z'),
        }),
      );
      fake = await start({ tools: tools(5), pageSize: 3 });
      h = (await makeTeam(t.app)).owner.headers;
    });
    after(async () => {
      await fake.close();
      await t.close();
    });
    const instance = async (url: string) =>
      (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: h,
          payload: { connectorKey: 'mcp-generic', displayName: 'MCP', config: { url } },
        })
      ).json().data;

    it('syncs tools/list over two pages, upserts by toolKey and deactivates tools that disappeared', async () => {
      const inst = await instance(fake.url);
      const res = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
      assert.equal(res.statusCode, 200, res.body);
      const synced = res.json().data;
      assert.equal(synced.length, 5);
      assert.ok(
        synced.every(
          (x: { source: string; isActive: boolean; connectorKey: string }) =>
            x.source === 'auto_discovered' && x.isActive && x.connectorKey === 'mcp-generic',
        ),
      );
      const listCalls = fake.requests.filter((r) => r.method === 'tools/list');
      assert.equal(listCalls.length, 2, 'two pages');
      if (era === '2026-07-28') {
        assert.ok(fake.requests.some((r) => r.method === 'server/discover'));
        assert.ok(
          listCalls.every(
            (r) => r.headers['mcp-method'] === 'tools/list' && r.headers['mcp-protocol-version'] === '2026-07-28',
          ),
        );
        assert.ok(!fake.requests.some((r) => r.method === 'initialize'));
      } else {
        assert.ok(fake.requests.some((r) => r.method === 'initialize'));
        assert.ok(listCalls.every((r) => typeof r.headers['mcp-session-id'] === 'string'));
      }
      const ids = new Map(synced.map((x: { toolKey: string; id: string }) => [x.toolKey, x.id]));
      // The server drops two tools and changes one: same ids, two deactivated.
      fake.options.tools = [...tools(3), { name: 'tool_new', description: 'New', inputSchema: { type: 'object' } }];
      fake.options.tools[0] = { ...fake.options.tools[0], description: 'Changed' };
      const again = (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h })).json()
        .data;
      assert.equal(again.length, 6);
      const byKey = Object.fromEntries(again.map((x: { toolKey: string }) => [x.toolKey, x]));
      assert.equal(byKey.tool_0.id, ids.get('tool_0'));
      // A changed definition is held for review; the accepted one stays (docs/connectors.md, Tool definitions).
      assert.equal(byKey.tool_0.definitionStatus, 'changed');
      assert.notEqual(byKey.tool_0.description, 'Changed');
      assert.equal(byKey.tool_0.pendingDefinition.description, 'Changed');
      assert.equal(byKey.tool_1.definitionStatus, 'accepted');
      assert.equal(byKey.tool_3.isActive, false);
      assert.equal(byKey.tool_4.isActive, false);
      assert.equal(byKey.tool_new.isActive, true);
      fake.options.tools = tools(5);
    });

    it('invokes a tool through tools/call with input validated, disabled refused, rate limit enforced', async () => {
      const inst = await instance(fake.url);
      const synced = (
        await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h })
      ).json().data;
      const tool = synced.find((x: { toolKey: string }) => x.toolKey === 'tool_1');
      const bad = await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
        headers: h,
        payload: { input: { text: 5 } },
      });
      assert.equal(bad.statusCode, 400);
      assert.ok(bad.json().error.details.some((d: { field: string }) => d.field === 'input.text'));
      const ok = await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
        headers: h,
        payload: { input: { text: 'hi' } },
      });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().data.status, 'completed');
      assert.match(JSON.stringify(ok.json().data.result), /tool_1/);
      assert.deepEqual(fake.calls.at(-1), { name: 'tool_1', args: { text: 'hi' } });
      const off = await t.inject({
        method: 'PATCH',
        url: `${C}/instances/${inst.id}/tools/${tool.id}`,
        headers: h,
        payload: { enabled: false },
      });
      assert.deepEqual(off.json().data, { id: tool.id, isActive: false, requiresApproval: false, rateLimitRpm: null });
      const refused = await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
        headers: h,
        payload: { input: { text: 'hi' } },
      });
      assert.equal(refused.statusCode, 409);
      await t.inject({
        method: 'PATCH',
        url: `${C}/instances/${inst.id}/tools/${tool.id}`,
        headers: h,
        payload: { enabled: true },
      });
      await t.app.kernel.db
        .updateTable('connector_tools')
        .set({ rate_limit_rpm: 2 })
        .where('id', '=', tool.id)
        .execute();
      for (let i = 0; i < 2; i++)
        assert.equal(
          (
            await t.inject({
              method: 'POST',
              url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
              headers: h,
              payload: { input: { text: 'x' } },
            })
          ).statusCode,
          200,
        );
      const limited = await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
        headers: h,
        payload: { input: { text: 'x' } },
      });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error.code, 'RATE_LIMIT_EXCEEDED');
      assert.ok(limited.headers['retry-after']);
    });

    it('health test: initialize/discover plus ping gives healthy and active', async () => {
      const inst = await instance(fake.url);
      const res = (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/test`, headers: h })).json().data;
      assert.equal(res.healthy, true, res.message);
      assert.match(res.message, new RegExp(era));
      assert.equal(
        (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}`, headers: h })).json().data.status,
        'active',
      );
    });

    it('a server that dies mid-sync changes nothing; a repeated cursor stops the walk', async () => {
      const dying = await start({ tools: tools(6), pageSize: 3, dieOnPage: 1 });
      try {
        const inst = await instance(dying.url);
        const res = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
        assert.equal(res.statusCode, 502);
        assert.equal(res.json().error.code, 'UPSTREAM_FAILED');
        assert.equal(
          (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/tools`, headers: h })).json().data.length,
          0,
        );
      } finally {
        await dying.close();
      }
      const stuck = await start({ tools: tools(2), stuckCursor: 'again' });
      try {
        const inst = await instance(stuck.url);
        const res = await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h });
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().data.length, 1);
        assert.equal(stuck.requests.filter((r) => r.method === 'tools/list').length, 2);
      } finally {
        await stuck.close();
      }
    });
  });
}

describe('manual tools, locale and approvals', () => {
  let t: App;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
  });
  after(async () => t.close());

  it('adds manual tools only to custom connectors with valid JSON Schemas, translated by locale', async () => {
    const { owner, members } = await makeTeam(t.app, ['member']);
    const h = owner.headers;
    const key = `custom-${Date.now()}`;
    await t.inject({ method: 'POST', url: `${C}/definitions`, headers: h, payload: { key, name: 'Custom' } });
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: key, displayName: 'C' },
      })
    ).json().data;
    const base = {
      toolKey: 'lookup',
      displayName: 'Lookup',
      description: 'Finds things',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      outputSchema: { type: 'object' },
      translations: { fr: { displayName: 'Recherche', description: 'Trouve des choses' } },
    };
    const badSchema = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools`,
      headers: h,
      payload: { ...base, inputSchema: { type: 'nope' } },
    });
    assert.equal(badSchema.statusCode, 400);
    const created = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools`,
      headers: h,
      payload: base,
    });
    assert.equal(created.statusCode, 201);
    assert.equal(created.json().data.source, 'manual');
    assert.equal(created.json().data.isActive, true);
    assert.equal(created.json().data.rateLimitRpm, null);
    assert.equal(
      (await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/tools`, headers: h, payload: base }))
        .statusCode,
      409,
    );
    const fr = (
      await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/tools?locale=fr-CA`, headers: h })
    ).json().data[0];
    assert.equal(fr.displayName, 'Recherche');
    const de = (await t.inject({ method: 'GET', url: `${C}/instances/${inst.id}/tools?locale=de`, headers: h })).json()
      .data[0];
    assert.equal(de.displayName, 'Lookup');
    assert.equal(de.description, 'Finds things');
    // Custom connectors have no adapter: their tools cannot be run by Gantry.
    const noAdapter = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools/${created.json().data.id}/invoke`,
      headers: h,
      payload: { input: { q: 'x' } },
    });
    assert.equal(noAdapter.statusCode, 409);
    // System connectors refuse manual tools.
    const mcp = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: 'mcp-generic', displayName: 'M', config: { url: 'http://127.0.0.1:9/mcp' } },
      })
    ).json().data;
    assert.equal(
      (await t.inject({ method: 'POST', url: `${C}/instances/${mcp.id}/tools`, headers: h, payload: base })).statusCode,
      409,
    );
    // Approval-gated tool: a member's call waits; a member cannot decide; the owner rejects.
    const gated = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.id}/tools`,
        headers: h,
        payload: { ...base, toolKey: 'delete_all', requiresApproval: true },
      })
    ).json().data;
    const waiting = await t.inject({
      method: 'POST',
      url: `${C}/instances/${inst.id}/tools/${gated.id}/invoke`,
      headers: members.member.headers,
      payload: { input: { q: 'x' } },
    });
    assert.equal(waiting.statusCode, 202);
    const approval = waiting.json().data.approval;
    assert.equal(approval.status, 'pending');
    const pending = (await t.inject({ method: 'GET', url: `${C}/approvals?status=pending`, headers: h })).json().data;
    assert.ok(pending.some((a: { id: string }) => a.id === approval.id));
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: `${C}/approvals/${approval.id}/approve`,
          headers: members.member.headers,
        })
      ).statusCode,
      403,
    );
    const rejected = await t.inject({ method: 'POST', url: `${C}/approvals/${approval.id}/reject`, headers: h });
    assert.equal(rejected.json().data.status, 'rejected');
    assert.equal(
      (await t.inject({ method: 'POST', url: `${C}/approvals/${approval.id}/approve`, headers: h })).statusCode,
      409,
    );
  });

  /** An MCP tool that needs approval, with one call parked for it; fn runs before the server closes. */
  async function withParkedCall(
    fn: (ctx: {
      h: Record<string, string>;
      inst: { id: string };
      tool: { id: string };
      approvalId: string;
      calls: unknown[];
    }) => Promise<void>,
  ) {
    const fake = await startModernMcpServer({ tools: [{ name: 'wipe', inputSchema: { type: 'object' } }] });
    try {
      const { owner } = await makeTeam(t.app);
      const h = owner.headers;
      const inst = (
        await t.inject({
          method: 'POST',
          url: `${C}/instances`,
          headers: h,
          payload: { connectorKey: 'mcp-generic', displayName: 'M', config: { url: fake.url } },
        })
      ).json().data;
      const [tool] = (
        await t.inject({ method: 'POST', url: `${C}/instances/${inst.id}/sync-tools`, headers: h })
      ).json().data;
      await t.app.kernel.db
        .updateTable('connector_tools')
        .set({ requires_approval: 1 })
        .where('id', '=', tool.id)
        .execute();
      const waiting = (
        await t.inject({
          method: 'POST',
          url: `${C}/instances/${inst.id}/tools/${tool.id}/invoke`,
          headers: h,
          payload: { input: { all: true } },
        })
      ).json().data;
      assert.equal(fake.calls.length, 0);
      await fn({ h, inst, tool, approvalId: waiting.approval.id, calls: fake.calls });
    } finally {
      await fake.close();
    }
  }

  it('an approved MCP call runs once through tools/call', async () => {
    await withParkedCall(async ({ h, approvalId, calls }) => {
      const approved = (
        await t.inject({ method: 'POST', url: `${C}/approvals/${approvalId}/approve`, headers: h })
      ).json().data;
      assert.equal(approved.status, 'approved');
      assert.deepEqual(calls, [{ name: 'wipe', args: { all: true } }]);
      assert.match(JSON.stringify(approved.result), /wipe/);
    });
  });

  it('a call parked for approval does not run if the tool was disabled meanwhile', async () => {
    await withParkedCall(async ({ h, inst, tool, approvalId, calls }) => {
      const off = await t.inject({
        method: 'PATCH',
        url: `${C}/instances/${inst.id}/tools/${tool.id}`,
        headers: h,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200);
      const decided = (
        await t.inject({ method: 'POST', url: `${C}/approvals/${approvalId}/approve`, headers: h })
      ).json().data;
      assert.equal(decided.status, 'failed');
      assert.match(JSON.stringify(decided.result), /disabled/);
      assert.deepEqual(calls, []);
    });
  });
});
