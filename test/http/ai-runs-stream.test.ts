import { after, before, describe, it } from 'node:test';
import http from 'node:http';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { AI_ENV, aiMember, configure, startFakes, userSays } from '../helpers/ai.js';
import type { FakeKind, FakeProvider } from '../helpers/fake-ai.js';
import { openSse, type SseClient } from '../helpers/sse.js';

const RUNS = '/api/v1/features/chat/runs';
const KINDS: FakeKind[] = ['openai', 'anthropic', 'google'];
/** The prices configure() sets: $1 per 1M input tokens, $2 per 1M output tokens, in micro-dollars. */
const cost = (input: number, output: number) => input + 2 * output;

describe('streamed chat runs (SSE over a listening server, streaming fake providers)', () => {
  let t: TestApp;
  let base: string;
  let fakes: Record<FakeKind, FakeProvider>;
  const open: SseClient[] = [];

  before(async () => {
    // A longer provider deadline than AI_ENV's: a held stream must outlive a slow machine.
    t = await createTestApp({ env: { ...AI_ENV, GANTRY_AI_TIMEOUT_MS: '8000' } });
    await t.server.start();
    base = t.server.info.uri;
    fakes = await startFakes();
    await configure(t.app, fakes.openai, { priority: 1 });
    await configure(t.app, fakes.anthropic, { priority: 2 });
    await configure(t.app, fakes.google, { priority: 3 });
  });
  after(async () => {
    for (const c of open) c.close();
    await t.close();
    for (const f of Object.values(fakes)) await f.close();
  });

  async function stream(headers: Record<string, string>, payload: object) {
    const client = await openSse(`${base}${RUNS}`, headers, { ...payload, stream: true });
    open.push(client);
    return client;
  }
  const data = (c: SseClient, name: string) => c.events.filter((e) => e.event === name).map((e) => JSON.parse(e.data));
  const runRow = (id: string) =>
    t.app.kernel.db.selectFrom('ai_runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const ledger = (userId: string) =>
    t.app.kernel.db
      .selectFrom('wallet_ledger')
      .select(['amount_micros', 'reference'])
      .where('user_id', '=', userId)
      .where('reason', '=', 'ai_run')
      .execute();
  /** Nothing is answered before the first text, so the client is a bare request it can drop. */
  function bareRequest(headers: Record<string, string>, payload: object) {
    const req = http.request(`${base}${RUNS}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ ...payload, stream: true }));
    return req;
  }
  /** The user's only run, once it is no longer running. */
  const settledRunOf = (userId: string) =>
    until(async () => {
      const r = await t.app.kernel.db
        .selectFrom('ai_runs')
        .selectAll()
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return r && r.status !== 'running' ? r : undefined;
    }, 'the run to settle');
  async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const metric = async (name: string, labels: Record<string, string>) => {
    const values = (await t.app.kernel.metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
    const found = values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
    return found?.value ?? 0;
  };

  for (const kind of KINDS) {
    it(`${kind}: relays the deltas in order, then one run event; the wallet is debited by the reported usage`, async () => {
      const m = await aiMember(t.app);
      const calls = await metric('gantry_ai_provider_calls_total', {
        provider: kind,
        call: 'stream',
        outcome: 'succeeded',
      });
      fakes[kind].reply = `streamed words from ${kind} arrive one by one`;
      try {
        const s = await stream(m.headers, {
          ...userSays('hello'),
          model: `${kind}-test-model`,
          sessionId: `s-${kind}`,
        });
        await s.end();
        assert.equal(s.status, 200);
        assert.match(String(s.headers['content-type']), /^text\/event-stream/);
        assert.equal(s.headers['cache-control'], 'no-cache, no-transform');
        assert.equal(s.headers['x-accel-buffering'], 'no');
        assert.deepEqual(
          s.events.map((e) => e.event),
          ['start', ...Array(8).fill('delta'), 'run'],
        );
        assert.equal(
          data(s, 'delta')
            .map((d) => d.text)
            .join(''),
          fakes[kind].reply,
        );
        const [start] = data(s, 'start');
        const [run] = data(s, 'run');
        assert.deepEqual(start, { runId: run.id, sessionId: `s-${kind}`, provider: kind, model: `${kind}-test-model` });
        assert.equal(run.status, 'succeeded');
        assert.equal(run.provider, kind);
        assert.deepEqual(run.message, { role: 'assistant', content: fakes[kind].reply });
        assert.deepEqual(run.usage, { inputTokens: 12, outputTokens: 7, totalTokens: 19 });
        assert.equal(run.chargedUsd, cost(12, 7) / 1e6);
        assert.deepEqual(
          run.attempts.map((a: { provider: string; outcome: string }) => [a.provider, a.outcome]),
          [[kind, 'succeeded']],
        );
        assert.deepEqual(await ledger(m.user.id), [{ amount_micros: -cost(12, 7), reference: run.id }]);
        const row = await runRow(run.id);
        assert.equal(row.reserved_micros, 0, 'the hold is released');
        const got = await t.inject({ url: `${RUNS}/${run.id}`, headers: m.headers });
        assert.deepEqual((got.result as { data: unknown }).data, run);

        // The provider was asked in its streaming wire format.
        const sent = fakes[kind].chats().at(-1)!;
        if (kind === 'openai') {
          assert.equal(sent.body!.stream, true);
          assert.deepEqual(sent.body!.stream_options, { include_usage: true });
        } else if (kind === 'anthropic') assert.equal(sent.body!.stream, true);
        else assert.equal(sent.path, '/v1beta/models/google-test-model:streamGenerateContent?alt=sse');
        assert.equal(
          await metric('gantry_ai_provider_calls_total', { provider: kind, call: 'stream', outcome: 'succeeded' }),
          calls + 1,
        );
      } finally {
        fakes[kind].reply = `hello from ${kind}`;
      }
    });
  }

  for (const kind of KINDS) {
    it(`${kind}: a client that leaves closes the provider's connection; the run settles cancelled for the usage so far`, async () => {
      const m = await aiMember(t.app);
      const closed = fakes[kind].closedByClient;
      const chatStreams = await metric('gantry_sse_streams_open', { stream: 'chat' });
      fakes[kind].streamMode = 'hold';
      try {
        const s = await stream(m.headers, { ...userSays('hello'), model: `${kind}-test-model` });
        // Two deltas arrive while the provider is still answering: nothing is buffered.
        await s.next((e) => e.event === 'delta' && JSON.parse(e.data).text === 'from ');
        const [start] = data(s, 'start');
        assert.equal(await metric('gantry_sse_streams_open', { stream: 'chat' }), chatStreams + 1);
        s.close();
        await until(
          async () => (fakes[kind].closedByClient > closed ? true : undefined),
          'the provider to see its connection closed',
        );
        const row = await until(async () => {
          const r = await runRow(start.runId);
          return r.status === 'running' ? undefined : r;
        }, 'the run to settle');
        assert.equal(row.status, 'cancelled');
        assert.equal(row.error_code, 'CLIENT_CLOSED');
        assert.equal(row.reply, 'hello from ');
        assert.equal(row.reserved_micros, 0);
        // openai sends usage only at the end: input estimated from the prompt. anthropic and
        // google reported the input; the output is estimated from the text (11 bytes / 4).
        if (kind === 'openai') assert.ok(row.input_tokens > 10, String(row.input_tokens));
        else assert.equal(row.input_tokens, 12);
        assert.equal(row.output_tokens, 3);
        assert.equal(row.cost_micros, cost(row.input_tokens, 3));
        assert.equal(row.charged_micros, row.cost_micros);
        assert.deepEqual(await ledger(m.user.id), [{ amount_micros: -row.charged_micros, reference: row.id }]);
        assert.deepEqual(
          (JSON.parse(row.attempts) as Array<{ outcome: string }>).map((a) => a.outcome),
          ['cancelled'],
        );
        // A client leaving says nothing about the provider.
        assert.equal(t.app.services.ai.router.breaker(kind).snapshot().consecutiveFailures, 0);
        await until(
          async () =>
            (await metric('gantry_sse_streams_open', { stream: 'chat' })) === chatStreams ? true : undefined,
          'the chat stream gauge to drop',
        );
      } finally {
        fakes[kind].streamMode = 'ok';
      }
    });
  }

  for (const kind of KINDS) {
    it(`${kind}: a provider failing mid-stream ends the stream with an error event; the circuit counts it`, async () => {
      const m = await aiMember(t.app);
      const others = KINDS.filter((k) => k !== kind).map((k) => fakes[k].chats().length);
      const failures = t.app.services.ai.router.breaker(kind).snapshot().consecutiveFailures;
      fakes[kind].streamMode = 'fail-mid';
      try {
        const s = await stream(m.headers, { ...userSays('hello'), model: `${kind}-test-model` });
        await s.end();
        assert.deepEqual(
          s.events.map((e) => e.event),
          ['start', 'delta', 'delta', 'error'],
        );
        const [error] = data(s, 'error');
        assert.equal(error.code, 'UPSTREAM_FAILED');
        assert.match(error.message, new RegExp(`The provider ${kind} failed during its answer`));
        const expectedKind = kind === 'openai' ? 'network' : 'server';
        assert.deepEqual(
          error.details.attempts.map((a: { provider: string; outcome: string }) => [a.provider, a.outcome]),
          [[kind, expectedKind]],
        );
        const run = error.details.run;
        assert.equal(run.id, error.details.runId);
        assert.equal(run.status, 'failed');
        assert.equal(run.errorCode, 'PROVIDER_STREAM_FAILED');
        assert.deepEqual(run.message, { role: 'assistant', content: 'hello from ' });
        const row = await runRow(run.id);
        assert.equal(row.reserved_micros, 0);
        assert.ok(row.charged_micros > 0 && row.charged_micros === row.cost_micros);
        assert.deepEqual(await ledger(m.user.id), [{ amount_micros: -row.charged_micros, reference: row.id }]);
        // No failover once text was sent.
        assert.deepEqual(
          KINDS.filter((k) => k !== kind).map((k) => fakes[k].chats().length),
          others,
        );
        assert.equal(t.app.services.ai.router.breaker(kind).snapshot().consecutiveFailures, failures + 1);
        assert.equal(
          await metric('gantry_ai_provider_calls_total', { provider: kind, call: 'stream', outcome: expectedKind }),
          1,
        );
      } finally {
        fakes[kind].streamMode = 'ok';
        t.app.services.ai.router.reset(kind);
      }
    });
  }

  it('openai: an error chunk after the first text ends the stream; its type or code says whether the circuit counts it', async () => {
    const m = await aiMember(t.app);
    const breaker = () => t.app.services.ai.router.breaker('openai').snapshot().consecutiveFailures;
    const outcome = (kind: string) =>
      metric('gantry_ai_provider_calls_total', { provider: 'openai', call: 'stream', outcome: kind });
    const [servers, refusals] = [await outcome('server'), await outcome('refused')];
    const others = ['anthropic', 'google'].map((k) => fakes[k as FakeKind].chats().length);
    const failures = breaker();
    const openaiError = fakes.openai.streamError;
    fakes.openai.streamMode = 'error-chunk';
    const runOnce = async () => {
      const s = await stream(m.headers, { ...userSays('hello'), model: 'openai-test-model' });
      await s.end();
      assert.equal(s.status, 200);
      assert.deepEqual(
        s.events.map((e) => e.event),
        ['start', 'delta', 'delta', 'error'],
      );
      return data(s, 'error')[0];
    };
    try {
      // OpenAI's (and Ollama's) form: {error: {message, type: "server_error", code: null}}.
      const error = await runOnce();
      assert.equal(error.code, 'UPSTREAM_FAILED');
      assert.equal(
        error.message,
        'The provider openai failed during its answer (stream error: The server had an error while processing your request. Sorry about that!)',
      );
      assert.deepEqual(
        error.details.attempts.map((a: { outcome: string; httpStatus: number | null }) => [a.outcome, a.httpStatus]),
        [['server', null]],
      );
      assert.equal(error.details.run.errorCode, 'PROVIDER_STREAM_FAILED');
      assert.deepEqual(error.details.run.message, { role: 'assistant', content: 'hello from ' });
      const row = await runRow(error.details.runId);
      assert.equal(row.status, 'failed');
      assert.equal(row.reserved_micros, 0);
      assert.ok(row.charged_micros > 0 && row.charged_micros === row.cost_micros);
      assert.deepEqual(await ledger(m.user.id), [{ amount_micros: -row.charged_micros, reference: row.id }]);
      assert.equal(breaker(), failures + 1);
      assert.equal(await outcome('server'), servers + 1);

      // vLLM's form carries the HTTP status in code: a 400 is the request's fault, not the provider's.
      fakes.openai.streamError = {
        error: { object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', param: null, code: 400 },
      };
      const refused = await runOnce();
      assert.deepEqual(
        refused.details.attempts.map((a: { outcome: string }) => a.outcome),
        ['refused'],
      );
      assert.match(refused.message, /stream error: max_tokens is too large/);
      assert.equal(breaker(), 0, 'a refusal closes the count like a success');
      assert.equal(await outcome('refused'), refusals + 1);
      assert.equal((await ledger(m.user.id)).length, 2, 'the refused run is charged for its text too');
      // No failover once text was sent.
      assert.deepEqual(
        ['anthropic', 'google'].map((k) => fakes[k as FakeKind].chats().length),
        others,
      );
    } finally {
      fakes.openai.streamMode = 'ok';
      fakes.openai.streamError = openaiError;
      t.app.services.ai.router.reset('openai');
    }
  });

  it('a client that leaves before the provider answered closes the provider call; the run is cancelled and costs nothing', async () => {
    const m = await aiMember(t.app);
    const closed = fakes.openai.closedByClient;
    const calls = fakes.openai.chats().length;
    const others = ['anthropic', 'google'].map((k) => fakes[k as FakeKind].chats().length);
    const cancelled = await metric('gantry_ai_provider_calls_total', {
      provider: 'openai',
      call: 'stream',
      outcome: 'cancelled',
    });
    fakes.openai.mode = 'hang';
    try {
      const req = bareRequest(m.headers, userSays('hello'));
      await until(async () => (fakes.openai.chats().length > calls ? true : undefined), 'the provider call');
      req.destroy();
      await until(
        async () => (fakes.openai.closedByClient > closed ? true : undefined),
        'the provider to see its connection closed',
      );
      const row = await settledRunOf(m.user.id);
      assert.deepEqual(
        [row.status, row.error_code, row.reply, row.provider, row.charged_micros, row.reserved_micros],
        ['cancelled', 'CLIENT_CLOSED', null, null, 0, 0],
      );
      assert.deepEqual(
        (JSON.parse(row.attempts) as Array<{ provider: string; outcome: string }>).map((a) => [a.provider, a.outcome]),
        [['openai', 'cancelled']],
      );
      assert.deepEqual(await ledger(m.user.id), []);
      // No failover for a client that left, and nothing said about the provider.
      assert.deepEqual(
        ['anthropic', 'google'].map((k) => fakes[k as FakeKind].chats().length),
        others,
      );
      assert.equal(t.app.services.ai.router.breaker('openai').snapshot().consecutiveFailures, 0);
      assert.equal(
        await metric('gantry_ai_provider_calls_total', { provider: 'openai', call: 'stream', outcome: 'cancelled' }),
        cancelled + 1,
      );
    } finally {
      fakes.openai.mode = 'ok';
    }
  });

  for (const kind of KINDS) {
    it(`${kind}: a client that leaves after the provider accepted, before its first text, is charged the input (N-L1)`, async () => {
      const m = await aiMember(t.app);
      const opened = fakes[kind].streamsOpened;
      const closed = fakes[kind].closedByClient;
      fakes[kind].streamMode = 'hold-before-text';
      try {
        // 30,000 characters of prompt: about 7,500 tokens the provider is sent and bills.
        const req = bareRequest(m.headers, { ...userSays('x'.repeat(30_000)), model: `${kind}-test-model` });
        await until(
          async () => (fakes[kind].streamsOpened > opened ? true : undefined),
          'the provider to open its stream',
        );
        req.destroy();
        await until(
          async () => (fakes[kind].closedByClient > closed ? true : undefined),
          'the provider to see its connection closed',
        );
        const row = await settledRunOf(m.user.id);
        assert.deepEqual(
          [row.status, row.error_code, row.reply, row.provider, row.model, row.output_tokens, row.reserved_micros],
          ['cancelled', 'CLIENT_CLOSED', null, kind, `${kind}-test-model`, 0, 0],
        );
        // openai reports usage only at the end: the input is estimated from the prompt (one
        // token per 4 bytes). anthropic and google reported it in their opening events.
        if (kind === 'openai') assert.ok(row.input_tokens >= 7_500, String(row.input_tokens));
        else assert.equal(row.input_tokens, 12);
        assert.equal(row.cost_micros, cost(row.input_tokens, 0));
        assert.equal(row.charged_micros, row.cost_micros);
        assert.deepEqual(await ledger(m.user.id), [{ amount_micros: -row.charged_micros, reference: row.id }]);
        assert.deepEqual(
          (JSON.parse(row.attempts) as Array<{ provider: string; outcome: string; httpStatus: number }>).map((a) => [
            a.provider,
            a.outcome,
            a.httpStatus,
          ]),
          [[kind, 'cancelled', 200]],
        );
        assert.equal(t.app.services.ai.router.breaker(kind).snapshot().consecutiveFailures, 0);
      } finally {
        fakes[kind].streamMode = 'ok';
      }
    });
  }

  it('a stream that ends without usage or end mark is a failure, charged by estimate and never above the hold', async () => {
    const m = await aiMember(t.app);
    fakes.openai.streamMode = 'no-end';
    // 2,000 bytes of answer: 500 estimated tokens, five times the output cap the hold allows for.
    fakes.openai.reply = 'word '.repeat(400);
    try {
      const s = await stream(m.headers, userSays('hello'));
      await s.end();
      assert.equal(s.events[0].event, 'start');
      assert.equal(s.events.at(-1)!.event, 'error');
      assert.equal(data(s, 'delta').length, 400);
      const [error] = data(s, 'error');
      assert.deepEqual(
        error.details.attempts.map((a: { outcome: string }) => a.outcome),
        ['malformed'],
      );
      const row = await runRow(error.details.runId);
      assert.equal(row.status, 'failed');
      assert.equal(row.output_tokens, 500);
      assert.equal(row.cost_micros, cost(row.input_tokens, 500));
      assert.ok(row.charged_micros > 0 && row.charged_micros < row.cost_micros!, `${row.charged_micros}`);
      assert.deepEqual(await ledger(m.user.id), [{ amount_micros: -row.charged_micros, reference: row.id }]);
    } finally {
      fakes.openai.streamMode = 'ok';
      fakes.openai.reply = 'hello from openai';
      t.app.services.ai.router.reset('openai');
    }
  });

  it('fails over before the first text; when every provider fails it answers 502 in the envelope, not a stream', async () => {
    const m = await aiMember(t.app);
    fakes.openai.mode = '500';
    try {
      const s = await stream(m.headers, userSays('hello'));
      await s.end();
      const [run] = data(s, 'run');
      assert.equal(run.provider, 'anthropic');
      assert.deepEqual(
        run.attempts.map((a: { provider: string; outcome: string }) => [a.provider, a.outcome]),
        [
          ['openai', 'server'],
          ['anthropic', 'succeeded'],
        ],
      );
      fakes.anthropic.mode = '500';
      fakes.google.mode = '429';
      const failed = await stream(m.headers, userSays('hello'));
      await failed.end();
      assert.equal(failed.status, 502);
      assert.match(String(failed.headers['content-type']), /^application\/json/);
      const body = JSON.parse(failed.raw);
      assert.equal(body.error.code, 'UPSTREAM_FAILED');
      const row = await runRow(body.error.details.runId);
      assert.equal(row.status, 'failed');
      assert.equal(row.charged_micros, 0);
      assert.equal(row.error_code, 'PROVIDERS_FAILED');
      // Providers that refused or failed before accepting the request charge nothing.
      assert.deepEqual(
        (await ledger(m.user.id)).filter((l) => l.reference === row.id),
        [],
      );
    } finally {
      for (const f of Object.values(fakes)) f.mode = 'ok';
      for (const kind of KINDS) t.app.services.ai.router.reset(kind);
    }
  });

  it('keeps the checks of a non-streamed run: an empty wallet is 402 before any provider call', async () => {
    const m = await aiMember(t.app, { funds: 0 });
    const calls = fakes.openai.chats().length;
    const s = await stream(m.headers, userSays('hello'));
    await s.end();
    assert.equal(s.status, 402);
    assert.equal(JSON.parse(s.raw).error.code, 'INSUFFICIENT_FUNDS');
    assert.equal(fakes.openai.chats().length, calls);
  });

  it('gantry_ai_provider_calls_total counts non-streamed calls as call="chat" and health probes as call="probe"', async () => {
    const m = await aiMember(t.app);
    const chat = { provider: 'openai', call: 'chat', outcome: 'succeeded' };
    const probe = { provider: 'anthropic', call: 'probe', outcome: 'succeeded' };
    const [chats, probes] = [
      await metric('gantry_ai_provider_calls_total', chat),
      await metric('gantry_ai_provider_calls_total', probe),
    ];
    const res = await t.inject({ method: 'POST', url: RUNS, headers: m.headers, payload: userSays('hello') });
    assert.equal(res.statusCode, 201);
    await t.app.services.ai.probeProviders(new Date());
    assert.equal(await metric('gantry_ai_provider_calls_total', chat), chats + 1);
    assert.equal(await metric('gantry_ai_provider_calls_total', probe), probes + 1);
  });

  it('gantry_ai_breaker_state reads 2 once a circuit opens and 0 when closed', async () => {
    const m = await aiMember(t.app);
    fakes.google.streamMode = 'fail-mid';
    try {
      // AI_ENV's threshold is 2 consecutive failures.
      for (let i = 0; i < 2; i++)
        await (await stream(m.headers, { ...userSays('x'), model: 'google-test-model' })).end();
      assert.equal(await metric('gantry_ai_breaker_state', { provider: 'google' }), 2);
      assert.equal(await metric('gantry_ai_breaker_state', { provider: 'openai' }), 0);
    } finally {
      fakes.google.streamMode = 'ok';
      t.app.services.ai.router.reset('google');
    }
  });
});
