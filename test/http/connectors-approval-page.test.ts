import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeUser } from '../helpers/factories.js';
import { gatedTool } from '../helpers/mcp-approvals.js';
import { cookieHeader, cookiesFrom, form, FORM_HEADERS, hiddenInput } from '../helpers/oauth.js';
import { ManualClock } from '../../src/lib/clock.js';

describe('the approval page (GET/POST /approvals/:id)', () => {
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

  const ask = async (args: Record<string, unknown>) => {
    const gate = await setup.gate(args);
    if (gate.proceed) throw new Error('expected a pending approval');
    return gate.approval;
  };
  const browser = async (userId: string) =>
    `gantry_session=${await t.app.services.identity.browserSessions.start(userId)}`;
  const open = async (id: string, cookie: string) =>
    t.inject({ method: 'GET', url: `/approvals/${id}`, headers: { cookie } });
  const submit = (id: string, cookie: string, data: Record<string, string>) =>
    t.inject({ method: 'POST', url: `/approvals/${id}`, headers: { ...FORM_HEADERS, cookie }, payload: form(data) });

  it('shows an owner or admin the call, redacted, with Approve and Reject', async () => {
    const approval = await ask({ target: '/srv', token: 'do-not-show' });
    for (const user of [setup.team.owner.user, setup.team.members.admin.user]) {
      const res = await open(approval.id, await browser(user.id));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.match(res.headers['cache-control'] as string, /no-store/);
      const html = res.body;
      assert.match(html, /name="decision" value="approve"/);
      assert.match(html, /name="decision" value="reject"/);
      assert.ok(hiddenInput(html, 'csrf'));
      assert.match(html, /Claude Test/, 'the client');
      assert.ok(html.includes(setup.team.owner.user.email), 'who asked');
      assert.match(html, /Files/, 'the instance');
      assert.match(html, /wipe/, 'the tool');
      assert.match(html, /\/srv/);
      assert.match(html, /\[redacted\]/);
      assert.ok(!html.includes('do-not-show'));
      assert.ok(html.includes(approval.expiresAt));
    }
  });

  it('N-L5: names a self-registered client as unverified, a metadata document with its host', async () => {
    const owner = await browser(setup.team.owner.user.id);
    const through = async (clientId: string, target: string) => {
      const gate = await setup.gate({ target }, { clientId });
      if (gate.proceed) throw new Error('expected a pending approval');
      return /<dt>Through<\/dt><dd>([^<]*)<\/dd>/.exec((await open(gate.approval.id, owner)).body)?.[1];
    };
    assert.equal(await through(setup.client.clientId, '/cli'), 'Claude Test (MCP)', "the operator's client: verified");
    const { clients } = t.app.services.oauth;
    const saved = (id: string, registration: 'dynamic' | 'metadata_document') =>
      clients.saveSelfRegistered({
        id,
        name: 'Claude Code',
        redirectUris: ['http://127.0.0.1/cb'],
        scopes: ['tools:call'],
        registration,
        metadataExpiresAt: null,
      });
    const dynamic = await saved(randomUUID(), 'dynamic');
    assert.equal(await through(dynamic.id, '/dcr'), 'Claude Code (MCP, unverified)');
    const documented = await saved('https://agents.example:8443/claude.json', 'metadata_document');
    assert.equal(
      await through(documented.id, '/cimd'),
      'Claude Code (MCP, unverified, published by agents.example:8443)',
    );
  });

  it('a padded call (N-L6): the page shows every argument and says which were shortened', async () => {
    const approval = await ask({ note: 'n'.repeat(16_500), scope: 'ALL PRODUCTION DATA' });
    const res = await open(approval.id, await browser(setup.team.owner.user.id));
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /&quot;scope&quot;: &quot;ALL PRODUCTION DATA&quot;/);
    assert.match(res.body, /n…\[cut [\d,]+ characters\]&quot;/);
    assert.match(
      res.body,
      /<p class="notice" id="arguments-cut">Parts of the arguments are long and were shortened: note \(16,500 characters\)\./,
    );
    assert.ok(!res.body.includes('(truncated)'));
    // Thousands of keys: the first ones, a count of the rest, and the page says so.
    const many = await ask(Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`key${i}`, i])));
    const crowded = await open(many.id, await browser(setup.team.owner.user.id));
    assert.match(crowded.body, /&quot;key0&quot;: 0,/);
    assert.match(crowded.body, /&quot;…&quot;: &quot;\[cut [\d,]+ more keys\]&quot;/);
    assert.match(crowded.body, /shortened: the arguments \(3,000 keys, the first ones shown\)\./);
    // A call that fits says nothing of the kind.
    const short = await open((await ask({ target: '/short' })).id, await browser(setup.team.owner.user.id));
    assert.ok(!short.body.includes('arguments-cut'));
  });

  it('a member sees a 403 page; a stranger too; an unknown id is a 404 page', async () => {
    const approval = await ask({ target: '/member' });
    const member = await open(approval.id, await browser(setup.team.members.member.user.id));
    assert.equal(member.statusCode, 403);
    assert.match(member.headers['content-type'] as string, /text\/html/);
    assert.ok(!/name="decision"/.test(member.body));
    const stranger = await makeUser(t.app);
    assert.equal((await open(approval.id, await browser(stranger.id))).statusCode, 403);
    const posted = await submit(approval.id, await browser(setup.team.members.member.user.id), {
      decision: 'approve',
      csrf: 'x',
    });
    assert.equal(posted.statusCode, 403);
    assert.equal(
      (await open('00000000-0000-4000-8000-000000000000', await browser(setup.team.owner.user.id))).statusCode,
      404,
    );
  });

  it('refuses a form without the CSRF value of this browser', async () => {
    const approval = await ask({ target: '/csrf' });
    const owner = await browser(setup.team.owner.user.id);
    const csrf = hiddenInput((await open(approval.id, owner)).body, 'csrf')!;
    assert.equal((await submit(approval.id, owner, { decision: 'approve' })).statusCode, 403);
    const otherBrowser = await browser(setup.team.owner.user.id);
    assert.equal((await submit(approval.id, otherBrowser, { decision: 'approve', csrf })).statusCode, 403);
    const gate = await setup.gate({ target: '/csrf' });
    assert.equal(gate.proceed, false, 'still pending');
  });

  it('approves through the page: the retry then proceeds; the page says it was approved', async () => {
    const approval = await ask({ target: '/page' });
    const admin = await browser(setup.team.members.admin.user.id);
    const csrf = hiddenInput((await open(approval.id, admin)).body, 'csrf')!;
    const res = await submit(approval.id, admin, { decision: 'approve', csrf });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/approvals/${approval.id}`);
    assert.deepEqual(setup.fake.calls, []);
    const shown = await open(approval.id, admin);
    assert.match(shown.body, /data-status="approved"/);
    assert.ok(!/name="decision"/.test(shown.body));
    const gate = await setup.gate({ target: '/page' });
    assert.equal(gate.proceed, true);
    const again = await submit(approval.id, admin, { decision: 'reject', csrf });
    assert.equal(again.statusCode, 409);
  });

  it('rejects through the page', async () => {
    const approval = await ask({ target: '/page-no' });
    const owner = await browser(setup.team.owner.user.id);
    const csrf = hiddenInput((await open(approval.id, owner)).body, 'csrf')!;
    assert.equal((await submit(approval.id, owner, { decision: 'reject', csrf })).statusCode, 303);
    assert.match((await open(approval.id, owner)).body, /data-status="rejected"/);
  });

  it('an expired approval says so and cannot be decided', async () => {
    const approval = await ask({ target: '/page-late' });
    const owner = await browser(setup.team.owner.user.id);
    const csrf = hiddenInput((await open(approval.id, owner)).body, 'csrf')!;
    clock.advance(11 * 60 * 1000);
    const shown = await open(approval.id, owner);
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /data-status="expired"/);
    assert.match(shown.body, /expired/);
    assert.ok(!/name="decision"/.test(shown.body));
    const late = await submit(approval.id, owner, { decision: 'approve', csrf });
    assert.equal(late.statusCode, 409);
    assert.match(late.body, /expired/);
  });

  it('signs in a browser without a session, then shows the approval', async () => {
    const approval = await ask({ target: '/signin' });
    const first = await t.inject({ method: 'GET', url: `/approvals/${approval.id}` });
    assert.equal(first.statusCode, 401);
    assert.ok(!first.body.includes('/signin'), 'nothing of the call before signing in');
    const cookies = cookiesFrom(first.headers['set-cookie'] as string[] | string | undefined);
    const csrf = hiddenInput(first.body, 'csrf')!;
    const owner = setup.team.owner.user;
    const wrong = await submit(approval.id, cookieHeader(cookies), {
      action: 'signin',
      csrf,
      email: owner.email,
      password: 'not it',
    });
    assert.equal(wrong.statusCode, 401);
    const noCsrf = await submit(approval.id, cookieHeader(cookies), {
      action: 'signin',
      csrf: 'forged',
      email: owner.email,
      password: owner.password,
    });
    assert.equal(noCsrf.statusCode, 403);
    const ok = await submit(approval.id, cookieHeader(cookies), {
      action: 'signin',
      csrf,
      email: owner.email,
      password: owner.password,
    });
    assert.equal(ok.statusCode, 303);
    Object.assign(cookies, cookiesFrom(ok.headers['set-cookie'] as string[] | string | undefined));
    const shown = await open(approval.id, cookieHeader(cookies));
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /\/signin/);
  });
});
