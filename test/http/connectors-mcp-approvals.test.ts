import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { gatedTool } from '../helpers/mcp-approvals.js';
import { ManualClock } from '../../src/lib/clock.js';
import { DomainError } from '../../src/http/errors.js';

const C = '/api/v1/connectors';
const TEN_MINUTES = 10 * 60 * 1000;

describe('approvals of MCP tool calls (retry mode)', () => {
  let t: ReturnType<typeof withJson>;
  let clock: ManualClock;
  let setup: Awaited<ReturnType<typeof gatedTool>>;
  before(async () => {
    clock = new ManualClock('2026-03-01T00:00:00Z');
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' }, clock }));
    setup = await gatedTool(t);
  });
  after(async () => {
    await setup.fake.close();
    await t.close();
  });

  const pending = (gate: Awaited<ReturnType<typeof setup.gate>>) => {
    assert.equal(gate.proceed, false);
    if (gate.proceed) throw new Error('unreachable');
    return gate.approval;
  };
  const audit = (action: string, targetId: string) =>
    t.app.kernel.db
      .selectFrom('account_audit_log')
      .selectAll()
      .where('action', '=', action)
      .where('target_id', '=', targetId)
      .execute();

  it('the same arguments find the same pending approval; other arguments ask anew', async () => {
    const first = pending(await setup.gate({ target: '/tmp', token: 's3cret' }));
    assert.equal(first.status, 'pending');
    assert.equal(first.url, `http://127.0.0.1:8080/approvals/${first.id}`);
    assert.equal(first.expiresAt, new Date(clock.now().getTime() + TEN_MINUTES).toISOString());
    // Key order does not matter: the digest is over canonical JSON.
    const again = pending(await setup.gate({ token: 's3cret', target: '/tmp' }));
    assert.equal(again.id, first.id);
    const other = pending(await setup.gate({ target: '/home', token: 's3cret' }));
    assert.notEqual(other.id, first.id);
    assert.deepEqual(setup.fake.calls, []);
  });

  it('notifies the owners and admins in-app, not the members', async () => {
    const approval = pending(await setup.gate({ target: '/notify' }));
    const notes = await t.app.kernel.db
      .selectFrom('notifications')
      .select(['user_id', 'action_url', 'category'])
      .where('action_url', '=', approval.url)
      .execute();
    assert.deepEqual(
      notes.map((n) => n.user_id).sort(),
      [setup.team.owner.user.id, setup.team.members.admin.user.id].sort(),
    );
    assert.ok(notes.every((n) => n.category === 'connector_approval'));
  });

  it('the REST list shows it with its binding, the writeOnly argument redacted and nothing sealed in clear', async () => {
    const approval = pending(await setup.gate({ target: '/list', token: 'hunter2' }));
    const list = (
      await t.inject({ method: 'GET', url: `${C}/approvals?status=pending`, headers: setup.team.owner.headers })
    ).json().data;
    const shown = list.find((a: { id: string }) => a.id === approval.id);
    assert.equal(shown.mode, 'retry');
    assert.equal(shown.clientId, setup.client.clientId);
    assert.equal(shown.expiresAt, approval.expiresAt);
    assert.deepEqual(shown.input, { target: '/list', token: '[redacted]' });
    const row = await t.app.kernel.db
      .selectFrom('connector_tool_approvals')
      .selectAll()
      .where('id', '=', approval.id)
      .executeTakeFirstOrThrow();
    assert.ok(!row.input_sealed.includes('hunter2'));
    assert.match(row.args_digest ?? '', /^[0-9a-f]{64}$/);
  });

  it('a padded call (N-L6): the approver sees every argument, the long one shortened with a count', async () => {
    // The review's case: 16.5 KB of harmless note first, the scope that matters last.
    const args = { note: 'n'.repeat(16_500), token: 't'.repeat(20_000), scope: 'ALL PRODUCTION DATA' };
    const approval = pending(await setup.gate(args));
    const list = (
      await t.inject({ method: 'GET', url: `${C}/approvals?status=pending`, headers: setup.team.owner.headers })
    ).json().data;
    const shown = list.find((a: { id: string }) => a.id === approval.id);
    assert.deepEqual(Object.keys(shown.input), ['note', 'token', 'scope']);
    assert.equal(shown.input.scope, 'ALL PRODUCTION DATA');
    assert.equal(shown.input.token, '[redacted]', 'masked before anything is cut: no part of the secret shows');
    assert.match(shown.input.note, /^n+…\[cut [\d,]+ characters\]$/);
    assert.ok(JSON.stringify(shown.input).length <= 16 * 1024);
    assert.equal(shown.inputTruncated, true);
    assert.deepEqual(shown.inputCut, [{ path: 'note', kind: 'string', originalLength: 16_500 }]);
    // The approver's decision answers the same view.
    const decided = (await setup.decide(approval.id, 'reject')).json().data;
    assert.equal(decided.input.scope, 'ALL PRODUCTION DATA');
    assert.deepEqual(decided.inputCut, shown.inputCut);
  });

  it('approving through REST runs nothing; the identical retry proceeds and is consumed once', async () => {
    const approval = pending(await setup.gate({ target: '/once' }));
    const res = await setup.decide(approval.id, 'approve');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.status, 'approved');
    assert.equal(res.json().data.result, null);
    assert.deepEqual(setup.fake.calls, [], 'the upstream is not called on approval');
    assert.equal((await audit('connector.tool_approval_decided', approval.id)).length, 1);

    const go = await setup.gate({ target: '/once' });
    assert.equal(go.proceed, true);
    if (!go.proceed) return;
    assert.equal(go.approvalId, approval.id);
    assert.equal(await go.consume(), true);
    assert.equal(await go.consume(), false, 'single use');
    const consumed = await audit('connector.tool_approval_consumed', approval.id);
    assert.equal(consumed.length, 1);
    assert.equal(JSON.parse(consumed[0].metadata).clientId, setup.client.clientId);
    // The next identical call needs a new approval.
    const next = pending(await setup.gate({ target: '/once' }));
    assert.notEqual(next.id, approval.id);
    assert.equal(next.status, 'pending');
    // Deciding again is refused.
    assert.equal((await setup.decide(approval.id, 'reject')).statusCode, 409);
  });

  it('two identical retries at once: exactly one may run', async () => {
    const approval = pending(await setup.gate({ target: '/race' }));
    await setup.decide(approval.id, 'approve');
    const [a, b] = await Promise.all([setup.gate({ target: '/race' }), setup.gate({ target: '/race' })]);
    assert.ok(a.proceed && b.proceed);
    const used = await Promise.all([a.consume(), b.consume()]);
    assert.deepEqual(used.sort(), [false, true]);
  });

  it('a rejection is told once, then the retry asks again', async () => {
    const approval = pending(await setup.gate({ target: '/no' }));
    const res = await setup.decide(approval.id, 'reject', setup.team.owner.headers);
    assert.equal(res.json().data.status, 'rejected');
    const told = pending(await setup.gate({ target: '/no' }));
    assert.deepEqual([told.id, told.status], [approval.id, 'rejected']);
    const asked = pending(await setup.gate({ target: '/no' }));
    assert.notEqual(asked.id, approval.id);
    assert.equal(asked.status, 'pending');
  });

  it('expiry: an undecided approval expires, cannot be decided, and is told once as expired', async () => {
    const approval = pending(await setup.gate({ target: '/late' }));
    clock.advance(TEN_MINUTES + 1000);
    const late = await setup.decide(approval.id, 'approve');
    assert.equal(late.statusCode, 409);
    assert.match(late.json().error.message, /expired/);
    const told = pending(await setup.gate({ target: '/late' }));
    assert.deepEqual([told.id, told.status], [approval.id, 'expired']);
    assert.notEqual(pending(await setup.gate({ target: '/late' })).id, approval.id);
  });

  it('expiry: an approval unused within ten minutes of the decision expires', async () => {
    const approval = pending(await setup.gate({ target: '/slow' }));
    clock.advance(TEN_MINUTES - 60_000);
    await setup.decide(approval.id, 'approve');
    clock.advance(TEN_MINUTES - 1000);
    const stillOk = await setup.gate({ target: '/slow' });
    assert.equal(stillOk.proceed, true, 'usable for ten minutes after the decision');
    clock.advance(2000);
    if (stillOk.proceed) assert.equal(await stillOk.consume(), false, 'the deadline is checked when consuming');
    const told = pending(await setup.gate({ target: '/slow' }));
    assert.deepEqual([told.id, told.status], [approval.id, 'expired']);
  });

  it('another user or client cannot use an approval; another workspace cannot reach the tool', async () => {
    const approval = pending(await setup.gate({ target: '/mine' }));
    await setup.decide(approval.id, 'approve');
    const admin = setup.team.members.admin.user.id;
    const byOther = pending(await setup.gate({ target: '/mine' }, { userId: admin }));
    assert.notEqual(byOther.id, approval.id);
    const viaOther = pending(await setup.gate({ target: '/mine' }, { clientId: 'another-client' }));
    assert.notEqual(viaOther.id, approval.id);
    const stranger = await makeTeam(t.app);
    const ws = await t.app.services.accounts.access.workspace(
      { ...strangerPrincipal(stranger.owner.user.id) },
      { accountId: stranger.account.id },
    );
    await assert.rejects(
      t.app.services.connectors.approvals.gateMcpCall({
        ws,
        userId: stranger.owner.user.id,
        clientId: setup.client.clientId,
        tool: { instanceId: setup.inst.id, toolId: setup.tool.id, name: 'files__wipe' },
        args: { target: '/mine' },
      }),
      (err) => err instanceof DomainError && err.status === 404,
    );
    // Still there for its own caller.
    assert.equal((await setup.gate({ target: '/mine' })).proceed, true);
  });

  it('a tool changed since the approval is another target: the retry asks again', async () => {
    const approval = pending(await setup.gate({ target: '/changed' }));
    await setup.decide(approval.id, 'approve');
    const before = (
      await t.app.kernel.db
        .selectFrom('connector_tools')
        .select('input_schema')
        .where('id', '=', setup.tool.id)
        .executeTakeFirstOrThrow()
    ).input_schema;
    await setCatalogSchema(JSON.stringify({ type: 'object', properties: { target: { type: 'string' } } }));
    try {
      const refused = pending(await setup.gate({ target: '/changed' }));
      assert.notEqual(refused.id, approval.id);
    } finally {
      await setCatalogSchema(before);
    }
    assert.equal((await setup.gate({ target: '/changed' })).proceed, true, 'unchanged again: it matches');
  });

  it('a tool that needs no approval proceeds at once', async () => {
    await t.inject({
      method: 'PATCH',
      url: `${C}/instances/${setup.inst.id}/tools/${setup.tool.id}`,
      headers: setup.team.owner.headers,
      payload: { requiresApproval: false },
    });
    try {
      const go = await setup.gate({ target: '/free' });
      assert.equal(go.proceed, true);
      if (go.proceed) assert.equal(go.approvalId, null);
    } finally {
      await t.inject({
        method: 'PATCH',
        url: `${C}/instances/${setup.inst.id}/tools/${setup.tool.id}`,
        headers: setup.team.owner.headers,
        payload: { requiresApproval: true },
      });
    }
  });

  const setCatalogSchema = (schema: string) =>
    t.app.kernel.db
      .updateTable('connector_tools')
      .set({ input_schema: schema })
      .where('id', '=', setup.tool.id)
      .execute();
  const strangerPrincipal = (userId: string) => ({
    userId,
    kind: 'oauth' as const,
    scopes: null,
    clientId: null,
    sessionId: null,
    accountId: null,
    tokenId: null,
  });
});
