import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { AI_ENV, aiMember, configure, startFakes, userSays } from '../helpers/ai.js';
import type { FakeKind, FakeProvider } from '../helpers/fake-ai.js';
import { type CollectedSpan, type OtlpCollector, startOtlpCollector, tracingEnv } from '../helpers/otlp-collector.js';
import { openSse } from '../helpers/sse.js';

const RUNS = '/api/v1/features/chat/runs';
const PROMPT = 'a prompt that never reaches a span';
/** A trace id per test, continued from the request's traceparent. */
const traceparent = (traceId: string) => `00-${traceId}-${'1'.repeat(16)}-01`;

/** Exports what has ended, then the spans of `traceId` (polled: a streamed run settles after its answer). */
async function spansOf(t: TestApp, collector: OtlpCollector, traceId: string, ready: (s: CollectedSpan[]) => boolean) {
  for (let i = 0; ; i++) {
    await t.app.kernel.tracing.flush();
    const spans = collector.spans.filter((s) => s.traceId === traceId);
    if (ready(spans)) return spans;
    if (i >= 100) assert.fail(`waited 2 s for the spans of ${traceId}: ${spans.map((s) => s.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const spanNamed = (spans: CollectedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  assert.equal(found.length, 1, `one ${name} in ${spans.map((s) => s.name).join(', ')}`);
  return found[0];
};

describe('traces of AI runs (docs/operations.md, Traces)', () => {
  let collector: OtlpCollector;
  let t: TestApp;
  let fakes: Record<FakeKind, FakeProvider>;
  let headers: Record<string, string>;
  const run = (traceId: string, payload: object = userSays(PROMPT)) =>
    t.inject({ method: 'POST', url: RUNS, headers: { ...headers, traceparent: traceparent(traceId) }, payload });

  before(async () => {
    collector = await startOtlpCollector();
    t = await createTestApp({ env: { ...AI_ENV, GANTRY_AI_TIMEOUT_MS: '8000', ...tracingEnv(collector) } });
    await t.server.start();
    fakes = await startFakes();
    await configure(t.app, fakes.openai, { priority: 1 });
    await configure(t.app, fakes.anthropic, { priority: 2 });
    headers = (await aiMember(t.app, { funds: 50 })).headers;
  });
  after(async () => {
    await t.close();
    for (const f of Object.values(fakes)) await f.close();
    await collector.close();
  });

  it('a run has a client span `chat {model}` under its request, with the provider, model and usage, never the text', async () => {
    const traceId = '1a'.repeat(16);
    const res = await run(traceId);
    assert.equal(res.statusCode, 201, res.payload);
    const spans = await spansOf(t, collector, traceId, (s) => s.length >= 2);
    const http = spanNamed(spans, `POST ${RUNS}`);
    const chat = spanNamed(spans, 'chat openai-test-model');
    assert.equal(chat.kind, 'client');
    assert.equal(chat.parentSpanId, http.spanId);
    assert.deepEqual(Object.fromEntries(Object.entries(chat.attributes).filter(([k]) => k.startsWith('gen_ai.'))), {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'openai-test-model',
      'gen_ai.request.max_tokens': 100,
      'gen_ai.response.model': 'openai-test-model',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 7,
    });
    assert.equal(chat.attributes['server.address'], '127.0.0.1');
    assert.equal(chat.statusCode, 0);
    const text = JSON.stringify(collector.spans, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    assert.ok(!text.includes(PROMPT), 'no prompt in any span');
    assert.ok(!text.includes('hello from openai'), 'no answer in any span');
    assert.ok(!text.includes(fakes.openai.apiKey), 'no provider key in any span');
  });

  it('a streamed run ends its span when the stream settles: still open while the answer streams', async () => {
    const traceId = '2b'.repeat(16);
    fakes.openai.streamMode = 'hold';
    try {
      const client = await openSse(
        `${t.server.info.uri}${RUNS}`,
        { ...headers, traceparent: traceparent(traceId) },
        {
          ...userSays(PROMPT),
          stream: true,
        },
      );
      await client.next((e) => e.event === 'delta' && JSON.parse(e.data).text === 'from ');
      await t.app.kernel.tracing.flush();
      assert.deepEqual(
        collector.spans.filter((s) => s.traceId === traceId),
        [],
        'neither the request nor the provider call has ended while the answer streams',
      );
      client.close();
      const spans = await spansOf(t, collector, traceId, (s) => s.some((x) => x.kind === 'server'));
      const chat = spanNamed(spans, 'chat openai-test-model');
      assert.equal(chat.parentSpanId, spanNamed(spans, `POST ${RUNS}`).spanId);
      assert.equal(chat.attributes['gantry.ai.outcome'], 'cancelled');
      assert.equal(chat.statusCode, 0, 'a client leaving is not a provider failure');
    } finally {
      fakes.openai.streamMode = 'ok';
    }

    const done = '2c'.repeat(16);
    const client = await openSse(
      `${t.server.info.uri}${RUNS}`,
      { ...headers, traceparent: traceparent(done) },
      {
        ...userSays(PROMPT),
        stream: true,
      },
    );
    await client.end();
    const chat = spanNamed(await spansOf(t, collector, done, (s) => s.length >= 2), 'chat openai-test-model');
    assert.equal(chat.attributes['gen_ai.usage.input_tokens'], 12);
    assert.equal(chat.attributes['gen_ai.usage.output_tokens'], 7);
  });

  it('a failed provider is a failed span, and the move to the next one an event of the run', async () => {
    const traceId = '3c'.repeat(16);
    fakes.openai.mode = '500';
    try {
      assert.equal((await run(traceId)).statusCode, 201);
    } finally {
      fakes.openai.mode = 'ok';
    }
    const spans = await spansOf(t, collector, traceId, (s) => s.length >= 3);
    const failed = spanNamed(spans, 'chat openai-test-model');
    assert.equal(failed.statusCode, 2);
    assert.equal(failed.attributes['error.type'], 'server');
    const served = spanNamed(spans, 'chat anthropic-test-model');
    assert.equal(served.statusCode, 0);
    assert.equal(served.attributes['gen_ai.provider.name'], 'anthropic');
    const http = spanNamed(spans, `POST ${RUNS}`);
    assert.deepEqual(http.events, [
      {
        name: 'gantry.ai.fallback',
        attributes: {
          'gantry.ai.failed_provider': 'openai',
          'error.type': 'server',
          'gen_ai.provider.name': 'anthropic',
        },
      },
    ]);
  });

  it('a provider whose circuit is open is skipped: an event, and no span of a call never made', async () => {
    fakes.openai.mode = '500';
    try {
      // AI_ENV's breaker opens at two failures in a row (the previous test made one).
      await run('4d'.repeat(16));
      assert.equal(t.app.services.ai.router.breaker('openai').state(), 'open');
      const traceId = '5e'.repeat(16);
      assert.equal((await run(traceId)).statusCode, 201);
      const spans = await spansOf(t, collector, traceId, (s) => s.length >= 2);
      assert.deepEqual(spans.map((s) => s.name).sort(), [
        'POST /api/v1/features/chat/runs',
        'chat anthropic-test-model',
      ]);
      assert.deepEqual(spanNamed(spans, `POST ${RUNS}`).events, [
        {
          name: 'gantry.ai.provider_skipped',
          attributes: {
            'gen_ai.provider.name': 'openai',
            'gen_ai.request.model': 'openai-test-model',
            'gantry.ai.circuit': 'open',
          },
        },
      ]);
    } finally {
      fakes.openai.mode = 'ok';
    }
  });
});
