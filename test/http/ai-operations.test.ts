import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signedInUser } from '../helpers/factories.js';
import { addMember } from '../helpers/tenancy.js';
import { AI_ENV, aiMember, configure, userSays } from '../helpers/ai.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-ai.js';
import { ManualClock } from '../../src/lib/clock.js';

const OPS = '/api/v1/ai/operations';
const RUNS = '/api/v1/features/chat/runs';
type Body = { data: any; error: { code: string; message: string } | null };
const body = (res: { result?: unknown }) => res.result as Body;

describe('AI operations', () => {
  let t: TestApp;
  let clock: ManualClock;
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  const run = async (headers: Record<string, string>, payload: object) => {
    const res = await t.inject({ method: 'POST', url: RUNS, headers, payload });
    assert.equal(res.statusCode, 201, JSON.stringify(res.result));
    return body(res).data;
  };

  before(async () => {
    clock = new ManualClock('2026-03-01T10:00:00.000Z');
    t = await createTestApp({ clock, env: AI_ENV });
    openai = await startFakeProvider('openai');
    anthropic = await startFakeProvider('anthropic');
    await configure(t.app, openai, { priority: 1, models: ['gpt-test', 'gpt-unpriced'], priced: false });
    // Only gpt-test is priced: --price-* applies to the models of that call.
    await t.app.services.ai.admin.set({
      name: 'openai',
      baseUrl: openai.url,
      apiKey: openai.apiKey,
      models: ['gpt-test'],
      priceIn: 1,
      priceOut: 2,
    });
    await t.app.services.ai.admin.set({
      name: 'openai',
      baseUrl: openai.url,
      apiKey: openai.apiKey,
      models: ['gpt-test', 'gpt-unpriced'],
    });
  });
  after(async () => {
    await t.close();
    await openai.close();
    await anthropic.close();
  });

  it('need a bearer token (401) and the AI entitlement (403 AI_NOT_ENTITLED); 60 per minute', async () => {
    const outsider = await aiMember(t.app, { entitled: false });
    for (const path of ['rate-limit', 'models/health', 'sessions/s1/usage', 'cache/stats']) {
      assert.equal((await t.inject({ url: `${OPS}/${path}` })).statusCode, 401, path);
      const res = await t.inject({ url: `${OPS}/${path}`, headers: outsider.headers });
      assert.equal(res.statusCode, 403, path);
      assert.equal(body(res).error!.code, 'AI_NOT_ENTITLED');
      assert.equal(res.headers['x-ratelimit-limit'], '60');
    }
  });

  it('rate-limit reads the same account bucket the runs spend, without spending it', async () => {
    const m = await aiMember(t.app);
    const read = async (headers: Record<string, string> = m.headers) =>
      body(await t.inject({ url: `${OPS}/rate-limit`, headers })).data;
    assert.deepEqual(await read(), {
      limit: 60,
      remaining: 60,
      resetsAt: '2026-03-01T10:01:00.000Z',
      scope: 'account',
    });
    await run(m.headers, userSays('one'));
    clock.advance(5_000);
    await run(m.headers, userSays('two'));
    assert.deepEqual(await read(), {
      limit: 60,
      remaining: 58,
      resetsAt: '2026-03-01T10:01:00.000Z',
      scope: 'account',
    });
    const colleague = await signedInUser(t.app);
    await addMember(t.app, m.account.id, colleague.user.id, 'viewer');
    assert.equal(
      (await read({ ...colleague.headers, 'x-account-id': m.account.id })).remaining,
      58,
      'scope account: every member sees the same bucket',
    );
    clock.advance(60_000);
    assert.equal((await read()).remaining, 60);
  });

  it('models/health lists the three providers; unconfigured ones are unavailable with no circuit', async () => {
    const m = await aiMember(t.app);
    const res = await t.inject({ url: `${OPS}/models/health`, headers: m.headers });
    assert.equal(res.statusCode, 200);
    const list = body(res).data as Array<Record<string, unknown>>;
    assert.deepEqual(
      list.map((h) => h.provider),
      ['openai', 'anthropic', 'google'],
    );
    assert.deepEqual(list[0].status, 'healthy');
    assert.deepEqual(list[0].circuitState, 'closed');
    assert.equal(typeof list[0].lastCheckedAt, 'string', 'openai answered runs already');
    assert.deepEqual(list[1], {
      provider: 'anthropic',
      status: 'unavailable',
      circuitState: null,
      lastCheckedAt: null,
    });
    assert.deepEqual(list[2], { provider: 'google', status: 'unavailable', circuitState: null, lastCheckedAt: null });

    await configure(t.app, anthropic, { priority: 5 });
    const after = body(await t.inject({ url: `${OPS}/models/health`, headers: m.headers })).data as Array<
      Record<string, unknown>
    >;
    assert.deepEqual(after[1], {
      provider: 'anthropic',
      status: 'healthy',
      circuitState: 'closed',
      lastCheckedAt: null,
    });
    await t.app.services.ai.admin.remove('anthropic');
    const removed = body(await t.inject({ url: `${OPS}/models/health`, headers: m.headers })).data as Array<
      Record<string, unknown>
    >;
    assert.equal(removed[1].status, 'unavailable');
  });

  it('sessions/:id/usage sums the session; cost is null once a run used an unpriced model; other accounts get 404', async () => {
    const m = await aiMember(t.app);
    openai.usage = { input: 100, output: 50 };
    try {
      await run(m.headers, { ...userSays('a'), sessionId: 'sum-1', model: 'gpt-test' });
      openai.usage = { input: 30, output: 20 };
      await run(m.headers, { ...userSays('b'), sessionId: 'sum-1' });
      const usage = body(await t.inject({ url: `${OPS}/sessions/sum-1/usage`, headers: m.headers })).data;
      // (100*1 + 50*2) + (30*1 + 20*2) micro-dollars.
      assert.deepEqual(usage, {
        sessionId: 'sum-1',
        totalInputTokens: 130,
        totalOutputTokens: 70,
        totalTokens: 200,
        estimatedCostUsd: 0.00027,
        runCount: 2,
      });

      await run(m.headers, { ...userSays('c'), sessionId: 'sum-1', model: 'gpt-unpriced' });
      const unpriced = await t.inject({ url: `${OPS}/sessions/sum-1/usage`, headers: m.headers });
      assert.equal(body(unpriced).data.estimatedCostUsd, null);
      assert.equal(body(unpriced).data.runCount, 3);
      assert.equal(body(unpriced).data.totalTokens, 250);
    } finally {
      openai.usage = { input: 12, output: 7 };
    }
    const other = await aiMember(t.app);
    const foreign = await t.inject({ url: `${OPS}/sessions/sum-1/usage`, headers: other.headers });
    assert.equal(foreign.statusCode, 404);
    assert.equal((await t.inject({ url: `${OPS}/sessions/never/usage`, headers: m.headers })).statusCode, 404);
  });

  it("sessions/:id/usage is the session owner's only: other members, admins included, get the 404 of a session that does not exist", async () => {
    const owner = await aiMember(t.app);
    await run(owner.headers, { ...userSays('merger plan'), sessionId: 'board-merger-q3' });
    const own = await t.inject({ url: `${OPS}/sessions/board-merger-q3/usage`, headers: owner.headers });
    assert.equal(own.statusCode, 200);
    assert.equal(body(own).data.runCount, 1);

    const absent = await t.inject({ url: `${OPS}/sessions/no-such-session/usage`, headers: owner.headers });
    assert.equal(absent.statusCode, 404);
    for (const role of ['member', 'admin'] as const) {
      const colleague = await signedInUser(t.app);
      await addMember(t.app, owner.account.id, colleague.user.id, role);
      const headers = { ...colleague.headers, 'x-account-id': owner.account.id };
      const res = await t.inject({ url: `${OPS}/sessions/board-merger-q3/usage`, headers });
      assert.equal(res.statusCode, 404, role);
      assert.deepEqual(
        body(res).error,
        body(absent).error,
        `${role}: the same answer as a session that does not exist`,
      );
      assert.equal(body(res).data, null);
    }
  });

  it('cache/stats shows the prompt-context layers cached for the caller, and drops them when their data changes', async () => {
    const m = await aiMember(t.app);
    const stats = async () => body(await t.inject({ url: `${OPS}/cache/stats`, headers: m.headers })).data;
    assert.deepEqual(await stats(), { cachedLayers: 0, layers: [] });

    const lastSystem = () =>
      (openai.chats().at(-1)!.body as { messages: Array<{ content: string }> }).messages[0].content;
    await run(m.headers, { ...userSays('First topic: tides'), sessionId: 'cache-1' });
    assert.deepEqual(await stats(), {
      cachedLayers: 5,
      layers: ['preferences', 'persona', 'twin', 'session', 'memory'],
    });
    await run(m.headers, { ...userSays('And the moon?'), sessionId: 'cache-1' });
    assert.match(lastSystem(), /Recent conversations of this user began with: "First topic: tides"\.$/);
    // A new session joins the cached memory in front; the result equals a fresh computation.
    await run(m.headers, { ...userSays('Second topic: stars'), sessionId: 'cache-2' });
    await run(m.headers, { ...userSays('hello again'), sessionId: 'cache-3' });
    const cached = lastSystem();
    assert.match(cached, /began with: "Second topic: stars"; "First topic: tides"\.$/);
    t.app.services.ai.context.forgetAccount(m.account.id);
    await run(m.headers, { ...userSays('once more'), sessionId: 'cache-3' });
    assert.equal(
      lastSystem(),
      cached.replace(
        '"Second topic: stars"; "First topic: tides"',
        '"hello again"; "Second topic: stars"; "First topic: tides"',
      ),
    );

    // The user's profile changed (by any process): the twin layer is stale.
    await t.app.kernel.db
      .updateTable('users')
      .set({ full_name: 'Ada Lovelace', updated_at: '2026-03-01T11:00:00.000Z' })
      .where('id', '=', m.user.id)
      .execute();
    assert.deepEqual((await stats()).layers, ['preferences', 'persona', 'session', 'memory']);
    await run(m.headers, { ...userSays('Third'), sessionId: 'cache-1' });
    assert.match(lastSystem(), /talking with Ada Lovelace/);

    // The account changed: persona and preferences are stale.
    await t.app.kernel.db
      .updateTable('accounts')
      .set({ default_timezone: 'Europe/Paris', updated_at: '2026-03-01T11:00:00.000Z' })
      .where('id', '=', m.account.id)
      .execute();
    assert.deepEqual((await stats()).layers, ['twin', 'session', 'memory']);
    await run(m.headers, { ...userSays('Fourth'), sessionId: 'cache-1' });
    assert.match(lastSystem(), /Europe\/Paris timezone/);

    // An entitlement change drops every layer of the account.
    await t.app.services.accounts.setEntitlement(m.account.id, 'ai', false);
    await t.app.services.accounts.setEntitlement(m.account.id, 'ai', true);
    assert.deepEqual(await stats(), { cachedLayers: 0, layers: [] });
  });
});
