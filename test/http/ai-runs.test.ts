import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Hapi from '@hapi/hapi';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signedInUser } from '../helpers/factories.js';
import { addMember } from '../helpers/tenancy.js';
import { AI_ENV, aiMember, configure, startFakes, userSays } from '../helpers/ai.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-ai.js';
import { ManualClock } from '../../src/lib/clock.js';
import { registerBearerAuth, type Principal } from '../../src/http/auth.js';
import { registerResponses } from '../../src/http/responses.js';
import { createPageKit } from '../../src/http/pages.js';
import { registerRateLimits } from '../../src/http/rate-limit.js';
import { RUN_ROUTE_CONFIG } from '../../src/ai/routes.js';
import { aiPlugin } from '../../src/ai/plugin.js';
import { API } from '../../src/http/paths.js';
import { createLogger } from '../../src/lib/logger.js';

const RUNS = '/api/v1/features/chat/runs';
type Body = { data: any; error: { code: string; message: string; details?: any } | null };
const body = (res: { result?: unknown }) => res.result as Body;

describe('chat runs', () => {
  let t: TestApp;
  let clock: ManualClock;
  let fakes: Record<'openai' | 'anthropic' | 'google', FakeProvider>;
  const post = (headers: Record<string, string>, payload: unknown) =>
    t.inject({ method: 'POST', url: RUNS, headers, payload: payload as object });
  const balance = async (userId: string) => (await t.app.services.wallet.get(userId)).balance;
  const resetFakes = () => {
    for (const f of Object.values(fakes)) f.mode = 'ok';
  };

  before(async () => {
    clock = new ManualClock('2026-03-01T10:00:00.000Z');
    t = await createTestApp({ clock, env: AI_ENV });
    fakes = await startFakes();
  });
  after(async () => {
    await t.close();
    for (const f of Object.values(fakes)) await f.close();
  });

  it('answers 503 NO_PROVIDER_CONFIGURED while no provider is configured, and records nothing', async () => {
    const m = await aiMember(t.app);
    const res = await post(m.headers, userSays('hello'));
    assert.equal(res.statusCode, 503);
    assert.equal(body(res).error!.code, 'NO_PROVIDER_CONFIGURED');
    assert.equal(
      (await t.app.kernel.db.selectFrom('ai_runs').select('id').where('user_id', '=', m.user.id).execute()).length,
      0,
    );
    // Configure all three for the rest of the file: openai first, then anthropic, then google.
    await configure(t.app, fakes.openai, { priority: 1 });
    await configure(t.app, fakes.anthropic, { priority: 2 });
    await configure(t.app, fakes.google, { priority: 3 });
  });

  it('refuses an account without the AI entitlement (403 AI_NOT_ENTITLED) before any provider call', async () => {
    const m = await aiMember(t.app, { entitled: false });
    const calls = fakes.openai.chats().length;
    const res = await post(m.headers, userSays('hello'));
    assert.equal(res.statusCode, 403);
    assert.equal(body(res).error!.code, 'AI_NOT_ENTITLED');
    assert.equal(fakes.openai.chats().length, calls);
  });

  it('validates messages: roles, non-empty content, sizes, a user turn, stream, unknown models', async () => {
    const m = await aiMember(t.app);
    const cases: Array<[unknown, string]> = [
      [{}, 'messages'],
      [{ messages: [] }, 'messages'],
      [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role'],
      [{ messages: [{ role: 'user', content: '' }] }, 'messages.0.content'],
      [{ messages: [{ role: 'user', content: 'x'.repeat(32_001) }] }, 'messages.0.content'],
      [{ messages: Array.from({ length: 101 }, () => ({ role: 'user', content: 'x' })) }, 'messages'],
      [{ messages: [{ role: 'system', content: 'only system' }] }, 'messages'],
      [{ ...userSays('hi'), stream: 'yes' }, 'stream'],
      [{ ...userSays('hi'), sessionId: 'has spaces' }, 'sessionId'],
      [{ ...userSays('hi'), model: 'no-such-model' }, 'model'],
    ];
    for (const [payload, field] of cases) {
      const res = await post(m.headers, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 80));
      assert.equal(body(res).error!.code, 'VALIDATION_FAILED');
      assert.ok(
        (body(res).error!.details as Array<{ field: string }>).some((d) => d.field === field),
        `${field}: ${JSON.stringify(body(res).error)}`,
      );
    }
    const tooBig = await post(m.headers, {
      messages: Array.from({ length: 7 }, () => ({ role: 'user', content: 'x'.repeat(30_000) })),
    });
    assert.equal(tooBig.statusCode, 400);
    assert.equal(await balance(m.user.id), 10);
  });

  it('routes a run, records it, debits the wallet by its cost in the same transaction, returns the assistant message', async () => {
    const m = await aiMember(t.app);
    const res = await post(m.headers, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is Gantry?' },
      ],
      sessionId: 'chat-1',
    });
    assert.equal(res.statusCode, 201);
    const run = body(res).data;
    assert.equal(run.status, 'succeeded');
    assert.equal(run.provider, 'openai');
    assert.equal(run.model, 'openai-test-model');
    assert.equal(run.sessionId, 'chat-1');
    assert.equal(run.accountId, m.account.id);
    assert.deepEqual(run.message, { role: 'assistant', content: 'hello from openai' });
    assert.deepEqual(run.usage, { inputTokens: 12, outputTokens: 7, totalTokens: 19 });
    // $1/M in, $2/M out: 12 + 14 micro-dollars.
    assert.equal(run.estimatedCostUsd, 0.000026);
    assert.equal(run.chargedUsd, 0.000026);
    assert.equal(run.startedAt, '2026-03-01T10:00:00.000Z');
    assert.deepEqual(
      run.attempts.map((a: { provider: string; outcome: string }) => [a.provider, a.outcome]),
      [['openai', 'succeeded']],
    );

    assert.equal(await balance(m.user.id), 10 - 0.000026);
    const ledger = await t.app.kernel.db
      .selectFrom('wallet_ledger')
      .selectAll()
      .where('user_id', '=', m.user.id)
      .where('reason', '=', 'ai_run')
      .execute();
    assert.deepEqual(
      ledger.map((l) => [l.amount_micros, l.reference]),
      [[-26, run.id]],
    );
    const row = await t.app.kernel.db
      .selectFrom('ai_runs')
      .selectAll()
      .where('id', '=', run.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.reserved_micros, 0, 'the hold is released');
    assert.equal(row.charged_micros, 26);

    // The provider saw the assembled context first, then the caller's messages.
    const sent = fakes.openai.chats().at(-1)!.body as {
      messages: Array<{ role: string; content: string }>;
      max_tokens: number;
    };
    assert.equal(sent.max_tokens, 100);
    assert.equal(sent.messages[0].role, 'system');
    assert.match(sent.messages[0].content, /assistant of Acme Research, an organisation in biotech/);
    assert.match(sent.messages[0].content, /talking with Test User/);
    assert.deepEqual(sent.messages.slice(1), [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is Gantry?' },
    ]);

    const got = await t.inject({ url: `${RUNS}/${run.id}`, headers: m.headers });
    assert.equal(got.statusCode, 200);
    assert.deepEqual(body(got).data, run);
    const stranger = await signedInUser(t.app);
    const hidden = await t.inject({ url: `${RUNS}/${run.id}`, headers: stranger.headers });
    assert.equal(hidden.statusCode, 404);
    assert.equal((await t.inject({ url: `${RUNS}/not-a-uuid`, headers: m.headers })).statusCode, 422);
  });

  it("continues a session from its stored turns; another member cannot write into someone's session", async () => {
    const m = await aiMember(t.app);
    const first = body(await post(m.headers, { ...userSays('My name is Ada.'), sessionId: 'ada' })).data;
    fakes.openai.reply = 'Noted, Ada.';
    try {
      const second = await post(m.headers, { ...userSays('What is my name?'), sessionId: 'ada' });
      assert.equal(second.statusCode, 201);
    } finally {
      fakes.openai.reply = 'hello from openai';
    }
    const sent = (fakes.openai.chats().at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages;
    assert.deepEqual(sent.slice(1), [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: first.message.content },
      { role: 'user', content: 'What is my name?' },
    ]);
    const colleague = await signedInUser(t.app);
    await addMember(t.app, m.account.id, colleague.user.id, 'member');
    await t.app.services.wallet.credit(colleague.user.id, 1);
    const intrude = await post(
      { ...colleague.headers, 'x-account-id': m.account.id },
      { ...userSays('hi'), sessionId: 'ada' },
    );
    assert.equal(intrude.statusCode, 404);
  });

  it('refuses an empty wallet with 402 before any provider is called, and records no run', async () => {
    const m = await aiMember(t.app, { funds: 0 });
    const calls = fakes.openai.chats().length;
    const res = await post(m.headers, userSays('hello'));
    assert.equal(res.statusCode, 402);
    assert.equal(body(res).error!.code, 'INSUFFICIENT_FUNDS');
    assert.equal(fakes.openai.chats().length, calls);
    assert.equal(
      (await t.app.kernel.db.selectFrom('ai_runs').select('id').where('user_id', '=', m.user.id).execute()).length,
      0,
    );
  });

  it('never spends the same funds twice under concurrent runs', async () => {
    // 500 micros cover one hold (352) at a time and, run after run, only a few charges: some
    // of the ten are refused however the runs interleave, and all ten passing means two holds
    // saw the same funds. (With more funds, runs that do not overlap may all fit.)
    const m = await aiMember(t.app, { funds: 0.0005 });
    const calls = fakes.openai.chats().length;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(m.headers, userSays(`concurrent question ${i}`))),
    );
    const ok = results.filter((r) => r.statusCode === 201);
    const refused = results.filter((r) => r.statusCode === 402);
    assert.equal(ok.length + refused.length, 10, results.map((r) => r.statusCode).join(','));
    assert.ok(ok.length >= 1 && refused.length >= 1, `${ok.length} ran, ${refused.length} refused`);
    assert.equal(fakes.openai.chats().length - calls, ok.length, 'refused runs never reached a provider');
    const charged = ok.reduce((sum, r) => sum + Math.round(body(r).data.chargedUsd * 1e6), 0);
    const wallet = await t.app.kernel.db
      .selectFrom('wallets')
      .select('balance_micros')
      .where('user_id', '=', m.user.id)
      .executeTakeFirstOrThrow();
    assert.equal(wallet.balance_micros, 500 - charged);
    assert.ok(wallet.balance_micros >= 0);
    const ledger = await t.app.kernel.db
      .selectFrom('wallet_ledger')
      .select('amount_micros')
      .where('user_id', '=', m.user.id)
      .where('reason', '=', 'ai_run')
      .execute();
    assert.equal(ledger.length, ok.length);
    const runs = await t.app.kernel.db
      .selectFrom('ai_runs')
      .select(['status', 'reserved_micros'])
      .where('user_id', '=', m.user.id)
      .execute();
    assert.equal(runs.length, ok.length);
    assert.ok(runs.every((r) => r.status === 'succeeded' && r.reserved_micros === 0));
  });

  it('fails over to the next provider in priority order and charges at the serving model price', async () => {
    const m = await aiMember(t.app);
    fakes.openai.mode = '500';
    try {
      const res = await post(m.headers, userSays('fail over please'));
      assert.equal(res.statusCode, 201);
      const run = body(res).data;
      assert.equal(run.provider, 'anthropic');
      assert.equal(run.model, 'anthropic-test-model');
      assert.deepEqual(
        run.attempts.map((a: { provider: string; outcome: string; httpStatus: number }) => [
          a.provider,
          a.outcome,
          a.httpStatus,
        ]),
        [
          ['openai', 'server', 500],
          ['anthropic', 'succeeded', 200],
        ],
      );
      assert.equal(run.message.content, 'hello from anthropic');
      assert.equal(run.estimatedCostUsd, 0.000026);
    } finally {
      resetFakes();
      t.app.services.ai.router.reset('openai');
    }
  });

  it('drives a circuit closed -> open -> half-open -> closed, and open -> half-open -> open, as models/health shows', async () => {
    const m = await aiMember(t.app);
    const health = async () => {
      const res = await t.inject({ url: '/api/v1/ai/operations/models/health', headers: m.headers });
      assert.equal(res.statusCode, 200);
      return Object.fromEntries(
        (
          body(res).data as Array<{
            provider: string;
            status: string;
            circuitState: string;
            lastCheckedAt: string | null;
          }>
        ).map((h) => [h.provider, h]),
      );
    };
    fakes.openai.mode = 'hang';
    try {
      for (let i = 0; i < 2; i++) {
        const res = await post(m.headers, userSays(`timeout ${i}`));
        assert.equal(body(res).data.provider, 'anthropic');
        assert.equal(body(res).data.attempts[0].outcome, 'timeout');
      }
      let h = await health();
      assert.deepEqual([h.openai.status, h.openai.circuitState], ['unavailable', 'open']);
      assert.equal(h.openai.lastCheckedAt, clock.now().toISOString());
      assert.deepEqual([h.anthropic.status, h.anthropic.circuitState], ['healthy', 'closed']);

      const calls = fakes.openai.chats().length;
      const skipped = body(await post(m.headers, userSays('skip the open one'))).data;
      assert.deepEqual(
        skipped.attempts.map((a: { outcome: string }) => a.outcome),
        ['skipped', 'succeeded'],
      );
      assert.equal(fakes.openai.chats().length, calls);

      clock.advance(10_000);
      h = await health();
      assert.deepEqual([h.openai.status, h.openai.circuitState], ['degraded', 'half-open']);
      // The probe (a run here) fails: open again, the cool-down restarts.
      const probe = body(await post(m.headers, userSays('probe that fails'))).data;
      assert.equal(probe.attempts[0].outcome, 'timeout');
      h = await health();
      assert.deepEqual([h.openai.status, h.openai.circuitState], ['unavailable', 'open']);

      fakes.openai.mode = 'ok';
      clock.advance(10_000);
      // The croner health probe job closes it with a model-list call.
      const report = await t.app.services.ai.probeProviders(clock.now());
      assert.equal(report.probed, 3);
      assert.ok(fakes.openai.requests.some((r) => r.method === 'GET' && r.path === '/v1/models'));
      h = await health();
      assert.deepEqual([h.openai.status, h.openai.circuitState], ['healthy', 'closed']);
      assert.equal(body(await post(m.headers, userSays('back to openai'))).data.provider, 'openai');
    } finally {
      resetFakes();
    }
  });

  it('answers 502 UPSTREAM_FAILED when every provider fails, 503 with Retry-After when every circuit is open; the hold is released', async () => {
    const m = await aiMember(t.app);
    for (const f of Object.values(fakes)) f.mode = '500';
    try {
      const res = await post(m.headers, userSays('all down'));
      assert.equal(res.statusCode, 502);
      assert.equal(body(res).error!.code, 'UPSTREAM_FAILED');
      const { runId, attempts } = body(res).error!.details;
      assert.deepEqual(
        attempts.map((a: { outcome: string }) => a.outcome),
        ['server', 'server', 'server'],
      );
      const failed = await t.inject({ url: `${RUNS}/${runId}`, headers: m.headers });
      assert.equal(body(failed).data.status, 'failed');
      assert.equal(body(failed).data.errorCode, 'PROVIDERS_FAILED');
      assert.equal(body(failed).data.estimatedCostUsd, 0);
      await post(m.headers, userSays('all down again'));
      const blocked = await post(m.headers, userSays('all open'));
      assert.equal(blocked.statusCode, 503);
      assert.equal(body(blocked).error!.code, 'UPSTREAM_FAILED');
      assert.equal(blocked.headers['retry-after'], '10');
      assert.equal(await balance(m.user.id), 10);
      fakes.google.mode = 'bad-request';
      clock.advance(10_000);
      const refused = await post(m.headers, { ...userSays('refused'), model: 'google-test-model' });
      assert.equal(refused.statusCode, 502);
      assert.match(body(refused).error!.message, /google refused the request/);
    } finally {
      resetFakes();
      for (const name of ['openai', 'anthropic', 'google'] as const) t.app.services.ai.router.reset(name);
    }
  });

  it('refuses runs in a suspended account', async () => {
    const m = await aiMember(t.app);
    await t.app.kernel.db.updateTable('accounts').set({ status: 'suspended' }).where('id', '=', m.account.id).execute();
    const res = await post(m.headers, userSays('hello'));
    assert.equal(res.statusCode, 403);
    assert.equal(body(res).error!.code, 'ACCOUNT_SUSPENDED');
  });

  it('declares execution:run: OAuth tokens with it pass, without it get 403 INSUFFICIENT_SCOPE; session tokens pass', async () => {
    assert.equal(RUN_ROUTE_CONFIG.scope, 'execution:run');
    const m = await aiMember(t.app);
    // The OAuth token verifier lives in another domain: a stand-in that yields oauth principals,
    // in front of the real session verifier, on a server carrying the real kernel hooks.
    const oauth = (scopes: string[]): Principal => ({
      userId: m.user.id,
      kind: 'oauth',
      scopes,
      clientId: 'client-1',
      sessionId: null,
      accountId: null,
      tokenId: 'jti-1',
    });
    const server = Hapi.server();
    registerResponses(
      server,
      createLogger('silent'),
      clock,
      createPageKit({ name: 'Gantry', logoUrl: null }),
      () => undefined,
    );
    registerBearerAuth(server, [
      {
        name: 'oauth-stand-in',
        verify: async (token) =>
          token === 'oauth-run'
            ? oauth(['execution:run'])
            : token === 'oauth-wallet'
              ? oauth(['wallet:read'])
              : undefined,
      },
      t.app.services.identity.sessionVerifier,
    ]);
    registerRateLimits(server, t.app.kernel.limiter, clock, t.app.kernel.metrics);
    await server.register({ plugin: aiPlugin, options: t.app }, { routes: { prefix: API } });
    await server.initialize();
    const run = (token: string) =>
      server.inject({
        method: 'POST',
        url: RUNS,
        headers: { authorization: `Bearer ${token}` },
        payload: userSays('scoped'),
      });
    const denied = await run('oauth-wallet');
    assert.equal(denied.statusCode, 403);
    assert.equal((denied.result as Body).error!.code, 'INSUFFICIENT_SCOPE');
    assert.equal((await run('oauth-run')).statusCode, 201);
    assert.equal((await run(m.token)).statusCode, 201);
    const ops = await server.inject({
      url: '/api/v1/ai/operations/rate-limit',
      headers: { authorization: 'Bearer oauth-run' },
    });
    assert.equal(ops.statusCode, 403, 'AI operations are first-party only');
    await server.stop();
  });
});

describe("the account's AI rate limit", () => {
  let t: TestApp;
  let fake: FakeProvider;
  before(async () => {
    // Multiplier 0.05: 60 runs per minute become 3.
    t = await createTestApp({
      clock: new ManualClock('2026-03-01T10:00:00.000Z'),
      env: { ...AI_ENV, GANTRY_RATE_LIMIT_MULTIPLIER: '0.05' },
    });
    fake = await startFakeProvider('openai');
    await configure(t.app, fake);
  });
  after(async () => {
    await t.close();
    await fake.close();
  });

  it('is counted per account across its members and refuses with 429 and Retry-After', async () => {
    const m = await aiMember(t.app);
    const colleague = await signedInUser(t.app);
    await addMember(t.app, m.account.id, colleague.user.id, 'member');
    await t.app.services.wallet.credit(colleague.user.id, 1);
    const post = (headers: Record<string, string>) =>
      t.inject({ method: 'POST', url: RUNS, headers, payload: userSays('hi') });
    assert.equal((await post(m.headers)).statusCode, 201);
    assert.equal((await post(m.headers)).statusCode, 201);
    assert.equal((await post({ ...colleague.headers, 'x-account-id': m.account.id })).statusCode, 201);
    const calls = fake.chats().length;
    const refused = await post(m.headers);
    assert.equal(refused.statusCode, 429);
    assert.equal(body(refused).error!.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal(fake.chats().length, calls);
    const status = await t.inject({ url: '/api/v1/ai/operations/rate-limit', headers: m.headers });
    assert.deepEqual(body(status).data, {
      limit: 3,
      remaining: 0,
      resetsAt: '2026-03-01T10:01:00.000Z',
      scope: 'account',
    });
  });
});
