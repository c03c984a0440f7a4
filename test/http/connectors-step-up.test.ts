import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { bearer, signedInUser } from '../helpers/factories.js';
import { gatedTool } from '../helpers/mcp-approvals.js';
import { form, FORM_HEADERS, hiddenInput } from '../helpers/oauth.js';
import { SoftAuthenticator, totpAt } from '../helpers/second-factors.js';
import { addMember } from '../helpers/tenancy.js';
import { ManualClock } from '../../src/lib/clock.js';

/**
 * Step-up for approvals (docs/connectors.md, Approver step-up; docs/identity.md, Step-up): an
 * approver with a second factor decides only from a session that proved it within 5 minutes, on
 * the REST endpoints and the approval page; an owner can require every approver to have one.
 */
describe('step-up for approving gated tool calls', () => {
  let t: ReturnType<typeof withJson>;
  const clock = new ManualClock('2026-03-01T00:00:00Z');
  let setup: Awaited<ReturnType<typeof gatedTool>>;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' }, clock }));
    setup = await gatedTool(t);
  });
  after(async () => {
    await setup.fake.close();
    await t.close();
  });

  const ask = async (target: string) => {
    const gate = await setup.gate({ target });
    if (gate.proceed) throw new Error('expected a pending approval');
    return gate.approval;
  };
  const statusOf = async (id: string) =>
    (
      await t.app.kernel.db
        .selectFrom('connector_tool_approvals')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).status;

  /** A new admin of the team with two-step sign-in on; `proved`: whether their session proved it just now. */
  async function adminWithTwoStep() {
    const admin = await signedInUser(t.app);
    await addMember(t.app, setup.team.account.id, admin.user.id, 'admin');
    const { secret } = (
      await t.inject({ method: 'POST', url: '/api/v1/auth/totp/setup', headers: admin.headers })
    ).json().data;
    const on = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/totp/enable',
      headers: admin.headers,
      payload: { code: totpAt(secret, clock.now()) },
    });
    assert.equal(on.statusCode, 200, on.body);
    return { ...admin, secret };
  }
  const stepUp = (headers: Record<string, string>, code: string) =>
    t.inject({ method: 'POST', url: '/api/v1/auth/step-up', headers, payload: { code } });

  it('an approver without a second factor decides as before', async () => {
    const approval = await ask('/plain');
    const res = await setup.decide(approval.id, 'approve');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await statusOf(approval.id), 'approved');
  });

  it('with a second factor: a proof older than 5 minutes is 403 STEP_UP_REQUIRED; a step-up lets the decision through', async () => {
    const admin = await adminWithTwoStep();
    // Just turned on: the session proved the factor now, so it may decide at once.
    const first = await ask('/fresh');
    assert.equal((await setup.decide(first.id, 'reject', admin.headers)).statusCode, 200);

    clock.advance(5 * 60_000 + 1_000);
    const approval = await ask('/stale');
    const refused = await setup.decide(approval.id, 'approve', admin.headers);
    assert.equal(refused.statusCode, 403);
    const { error } = refused.json();
    assert.equal(error.code, 'STEP_UP_REQUIRED');
    assert.deepEqual(error.details.methods, ['totp', 'recovery_code']);
    assert.equal(await statusOf(approval.id), 'pending');
    // Rejecting needs it as much as approving.
    assert.equal((await setup.decide(approval.id, 'reject', admin.headers)).json().error.code, 'STEP_UP_REQUIRED');

    const wrong = await stepUp(admin.headers, '000000');
    assert.equal(wrong.statusCode, 403);
    assert.equal(wrong.json().error.code, 'FORBIDDEN');
    assert.equal((await setup.decide(approval.id, 'approve', admin.headers)).statusCode, 403);

    const proved = await stepUp(admin.headers, totpAt(admin.secret, clock.now()));
    assert.equal(proved.statusCode, 200, proved.body);
    assert.deepEqual(proved.json().data, {
      factorVerifiedAt: clock.now().toISOString(),
      validUntil: new Date(clock.now().getTime() + 5 * 60_000).toISOString(),
    });
    const ok = await setup.decide(approval.id, 'approve', admin.headers);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(await statusOf(approval.id), 'approved');

    // The proof lasts 5 minutes, then it is needed again.
    clock.advance(5 * 60_000 + 1_000);
    const later = await ask('/later');
    assert.equal((await setup.decide(later.id, 'approve', admin.headers)).json().error.code, 'STEP_UP_REQUIRED');
  });

  it('the proof belongs to a session: another session of the same approver must prove it itself', async () => {
    const admin = await adminWithTwoStep();
    const other = await t.app.services.identity.sessions.start(admin.user.id);
    const approval = await ask('/other-session');
    const res = await setup.decide(approval.id, 'approve', bearer(other.accessToken));
    assert.equal(res.json().error.code, 'STEP_UP_REQUIRED');
    // A session opened by the second step of a sign-in has proved it.
    clock.advance(30_000);
    const login = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: admin.user.email, password: admin.user.password },
    });
    const { mfaToken } = login.json().error.details;
    const mfa = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/login/mfa',
      payload: { mfaToken, code: totpAt(admin.secret, clock.now()) },
    });
    assert.equal(mfa.statusCode, 200, mfa.body);
    assert.equal((await setup.decide(approval.id, 'approve', bearer(mfa.json().data.accessToken))).statusCode, 200);
  });

  it('step-up refuses a session without a second factor to prove, and a replayed code', async () => {
    const plain = await signedInUser(t.app);
    assert.equal((await stepUp(plain.headers, '123456')).statusCode, 409);
    const admin = await adminWithTwoStep();
    clock.advance(30_000);
    const code = totpAt(admin.secret, clock.now());
    assert.equal((await stepUp(admin.headers, code)).statusCode, 200);
    const replay = await stepUp(admin.headers, code);
    assert.equal(replay.statusCode, 403);
  });

  it('the owner can require approvers to have a second factor: audited, owner only, enforced', async () => {
    const { account, owner, members } = setup.team;
    const url = `/api/v1/accounts/${account.id}/approval-settings`;
    assert.deepEqual((await t.inject({ url, headers: owner.headers })).json().data, {
      requireApproverSecondFactor: false,
      updatedAt: (await t.inject({ url, headers: owner.headers })).json().data.updatedAt,
    });
    const byAdmin = await t.inject({
      method: 'PATCH',
      url,
      headers: members.admin.headers,
      payload: { requireApproverSecondFactor: true },
    });
    assert.equal(byAdmin.statusCode, 403);
    assert.equal((await t.inject({ url, headers: members.member.headers })).statusCode, 403);
    assert.equal(
      (
        await t.inject({
          method: 'PATCH',
          url,
          headers: owner.headers,
          payload: { requireApproverSecondFactor: 'yes' },
        })
      ).statusCode,
      400,
    );
    const on = await t.inject({
      method: 'PATCH',
      url,
      headers: owner.headers,
      payload: { requireApproverSecondFactor: true },
    });
    assert.equal(on.statusCode, 200, on.body);
    assert.equal(on.json().data.requireApproverSecondFactor, true);
    const entry = await t.app.kernel.db
      .selectFrom('account_audit_log')
      .selectAll()
      .where('account_id', '=', account.id)
      .where('action', '=', 'account.updated')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(entry.actor_id, owner.user.id);
    assert.deepEqual(JSON.parse(entry.metadata as string), {
      field: 'requireApproverSecondFactor',
      oldValue: false,
      newValue: true,
    });

    // The admin has no second factor: refused, and told where to set one up.
    const approval = await ask('/required');
    const refused = await setup.decide(approval.id, 'approve');
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error.code, 'SECOND_FACTOR_REQUIRED');
    assert.equal(await statusOf(approval.id), 'pending');
    // An approver with one decides after proving it.
    const admin = await adminWithTwoStep();
    assert.equal((await setup.decide(approval.id, 'approve', admin.headers)).statusCode, 200);

    await t.inject({ method: 'PATCH', url, headers: owner.headers, payload: { requireApproverSecondFactor: false } });
    const after = await ask('/optional-again');
    assert.equal((await setup.decide(after.id, 'approve')).statusCode, 200);
  });

  describe('the approval page asks for the code in place', () => {
    const browser = async (userId: string) =>
      `gantry_session=${await t.app.services.identity.browserSessions.start(userId)}`;
    const open = (id: string, cookie: string) =>
      t.inject({ method: 'GET', url: `/approvals/${id}`, headers: { cookie } });
    const submit = (id: string, cookie: string, data: Record<string, string>) =>
      t.inject({ method: 'POST', url: `/approvals/${id}`, headers: { ...FORM_HEADERS, cookie }, payload: form(data) });

    it('shows a code field with the buttons; a missing or wrong code keeps the call pending; the right one decides', async () => {
      const admin = await adminWithTwoStep();
      clock.advance(30_000);
      const approval = await ask('/page-step-up');
      const cookie = await browser(admin.user.id);
      const shown = await open(approval.id, cookie);
      assert.equal(shown.statusCode, 200, shown.body);
      assert.match(shown.body, /<input id="code" name="code"/);
      assert.match(shown.body, /Confirm it is you first/);
      assert.match(shown.body, /name="decision" value="approve"/);
      const csrf = hiddenInput(shown.body, 'csrf')!;

      const none = await submit(approval.id, cookie, { csrf, decision: 'approve' });
      assert.equal(none.statusCode, 403);
      assert.match(none.body, /role="alert"[^>]*>Enter a code/);
      const wrong = await submit(approval.id, cookie, { csrf, decision: 'approve', code: '000000' });
      assert.equal(wrong.statusCode, 403);
      assert.match(wrong.body, /That code is wrong or was already used/);
      assert.match(wrong.body, /aria-invalid="true"/);
      assert.equal(await statusOf(approval.id), 'pending');

      const done = await submit(approval.id, cookie, {
        csrf,
        decision: 'approve',
        code: totpAt(admin.secret, clock.now()),
      });
      assert.equal(done.statusCode, 303, done.body);
      assert.equal(await statusOf(approval.id), 'approved');
      // The browser's session proved it: the next approval within 5 minutes needs no code.
      const next = await ask('/page-next');
      const again = await open(next.id, cookie);
      assert.ok(!again.body.includes('name="code"'));
    });

    it('when the owner requires a factor the approver lacks, the page says where to set one up and offers no buttons', async () => {
      const { account, owner } = setup.team;
      const url = `/api/v1/accounts/${account.id}/approval-settings`;
      await t.inject({ method: 'PATCH', url, headers: owner.headers, payload: { requireApproverSecondFactor: true } });
      try {
        const approval = await ask('/page-enrol');
        const cookie = await browser(setup.team.members.admin.user.id);
        const shown = await open(approval.id, cookie);
        assert.equal(shown.statusCode, 200);
        assert.match(shown.body, /requires approvers to use two-step sign-in or a passkey/);
        assert.match(shown.body, /href="\/account"/);
        assert.ok(!/name="decision"/.test(shown.body));
        const csrf = hiddenInput(shown.body, 'csrf') ?? '';
        assert.equal(csrf, '', 'no form');
        assert.equal(await statusOf(approval.id), 'pending');
      } finally {
        await t.inject({
          method: 'PATCH',
          url,
          headers: owner.headers,
          payload: { requireApproverSecondFactor: false },
        });
      }
    });
  });
});

describe('step-up for an approver whose only second factor is a passkey', () => {
  const ORIGIN = 'http://localhost:8080';
  let t: ReturnType<typeof withJson>;
  let setup: Awaited<ReturnType<typeof gatedTool>>;
  before(async () => {
    t = withJson(
      await createTestApp({
        env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', GANTRY_PUBLIC_URL: ORIGIN },
        clock: new ManualClock('2026-03-01T00:00:00Z'),
      }),
    );
    setup = await gatedTool(t);
  });
  after(async () => {
    await setup.fake.close();
    await t.close();
  });

  it('a passkey is a second factor too: the decision waits for a step-up made with it', async () => {
    const admin = await signedInUser(t.app);
    await addMember(t.app, setup.team.account.id, admin.user.id, 'admin');
    const device = new SoftAuthenticator(ORIGIN, 'localhost');
    const creation = (
      await t.inject({ method: 'POST', url: '/api/v1/auth/passkeys/registration/options', headers: admin.headers })
    ).json().data;
    const added = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/passkeys',
      headers: admin.headers,
      payload: { credential: device.register(creation) },
    });
    assert.equal(added.statusCode, 201, added.body);

    const gate = await setup.gate({ target: '/passkey-only' });
    if (gate.proceed) throw new Error('expected a pending approval');
    const refused = await setup.decide(gate.approval.id, 'approve', admin.headers);
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error.code, 'STEP_UP_REQUIRED');
    assert.deepEqual(refused.json().error.details, { methods: ['passkey'], stepUpUrl: '/api/v1/auth/step-up' });

    const request = (
      await t.inject({ method: 'POST', url: '/api/v1/auth/step-up/options', headers: admin.headers })
    ).json().data;
    const proved = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/step-up',
      headers: admin.headers,
      payload: { credential: device.authenticate(request) },
    });
    assert.equal(proved.statusCode, 200, proved.body);
    const ok = await setup.decide(gate.approval.id, 'approve', admin.headers);
    assert.equal(ok.statusCode, 200, ok.body);
    const row = await t.app.kernel.db
      .selectFrom('connector_tool_approvals')
      .select('status')
      .where('id', '=', gate.approval.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'approved');
  });
});
