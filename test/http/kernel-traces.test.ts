import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signedInUser } from '../helpers/factories.js';
import { type CollectedSpan, type OtlpCollector, startOtlpCollector, tracingEnv } from '../helpers/otlp-collector.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;

/** The spans exported so far (the app's batch is flushed first: no waiting on timers). */
async function exported(t: TestApp, collector: OtlpCollector): Promise<CollectedSpan[]> {
  // hapi emits the response event, which ends the span, once the answer is written: let it run.
  await new Promise((resolve) => setImmediate(resolve));
  await t.app.kernel.tracing.flush();
  return collector.spans;
}

const serverSpans = (spans: CollectedSpan[], name: string) =>
  spans.filter((s) => s.kind === 'server' && s.name === name);

describe('traces: a server span per HTTP request (docs/operations.md, Traces)', () => {
  let collector: OtlpCollector;
  let t: TestApp;
  before(async () => {
    collector = await startOtlpCollector();
    t = await createTestApp({
      env: {
        ...tracingEnv(collector),
        OTEL_SERVICE_NAME: 'gantry-under-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,service.name=overridden',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k%20one,x-tenant=acme',
      },
    });
  });
  after(async () => {
    await t.close();
    await collector.close();
  });

  it('names the span by method and route, with the HTTP attributes, as a new trace', async () => {
    const { headers } = await signedInUser(t.app);
    const res = await t.inject({ method: 'GET', url: '/api/v1/auth/me?secret=do-not-export', headers });
    assert.equal(res.statusCode, 200);
    const [span] = serverSpans(await exported(t, collector), 'GET /api/v1/auth/me');
    assert.ok(span, `spans: ${collector.spans.map((s) => s.name).join(', ')}`);
    assert.equal(span.parentSpanId, null);
    assert.match(span.traceId, /^[0-9a-f]{32}$/);
    assert.deepEqual(
      {
        method: span.attributes['http.request.method'],
        route: span.attributes['http.route'],
        status: span.attributes['http.response.status_code'],
        scheme: span.attributes['url.scheme'],
        path: span.attributes['url.path'],
        host: span.attributes['server.address'],
      },
      {
        method: 'GET',
        route: '/api/v1/auth/me',
        status: 200,
        scheme: 'http',
        path: '/api/v1/auth/me',
        host: '127.0.0.1',
      },
    );
    assert.equal(span.statusCode, 0);
    const text = JSON.stringify(span, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    assert.ok(!text.includes('do-not-export'), 'the query string is never exported');
    assert.ok(!text.includes(headers.authorization.slice(7)), 'nor the bearer token');
    assert.ok(span.endNs >= span.startNs);
  });

  it('continues an incoming traceparent (W3C Trace Context)', async () => {
    await t.inject({ method: 'GET', url: '/healthz', headers: { traceparent: TRACEPARENT, tracestate: 'vendor=x' } });
    const [span] = serverSpans(await exported(t, collector), 'GET /healthz');
    assert.equal(span.traceId, TRACE_ID);
    assert.equal(span.parentSpanId, PARENT_ID);
  });

  it('ignores a malformed traceparent: a new trace', async () => {
    const before = collector.spans.length;
    await t.inject({
      method: 'GET',
      url: '/healthz',
      headers: { traceparent: `00-${'0'.repeat(32)}-${PARENT_ID}-01` },
    });
    const [span] = serverSpans((await exported(t, collector)).slice(before), 'GET /healthz');
    assert.notEqual(span.traceId, '0'.repeat(32));
    assert.equal(span.parentSpanId, null);
  });

  it('an unmatched path has no route: the span is named by its method alone', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/no/such/thing-123' });
    assert.equal(res.statusCode, 404);
    const spans = await exported(t, collector);
    const span = spans.find((s) => s.attributes['url.path'] === '/api/v1/no/such/thing-123');
    assert.ok(span);
    assert.equal(span.name, 'GET');
    assert.equal(span.attributes['http.route'], undefined);
    assert.equal(span.attributes['http.response.status_code'], 404);
    assert.equal(span.statusCode, 0, 'a 4xx is the client error, not the server span failing');
  });

  it('each request is its own trace, and nothing of one leaks into the next', async () => {
    const before = collector.spans.length;
    await t.inject({ method: 'GET', url: '/healthz', headers: { traceparent: TRACEPARENT } });
    await t.inject({ method: 'GET', url: '/healthz' });
    const [first, second] = serverSpans((await exported(t, collector)).slice(before), 'GET /healthz');
    assert.equal(first.traceId, TRACE_ID);
    assert.notEqual(second.traceId, TRACE_ID);
    assert.equal(second.parentSpanId, null);
  });

  it('exports with the service name, the resource attributes and the configured headers', async () => {
    await exported(t, collector);
    const span = collector.spans[0];
    assert.equal(span.resource['service.name'], 'gantry-under-test', 'OTEL_SERVICE_NAME wins');
    assert.equal(span.resource['deployment.environment.name'], 'test');
    assert.equal(span.resource['telemetry.sdk.name'], 'opentelemetry');
    const last = collector.exports.at(-1)!;
    assert.equal(last.contentType, 'application/x-protobuf', 'http/protobuf by default');
    assert.equal(last.headers['x-collector-key'], 'k one');
    assert.equal(last.headers['x-tenant'], 'acme');
  });

  it('a prepared answer (sent without hapi) has its span too', async () => {
    await t.server.start();
    try {
      const url = `${t.server.info.uri}/api/v1/status`;
      for (let i = 0; i < 3; i++)
        assert.equal((await fetch(url, { headers: { traceparent: TRACEPARENT } })).status, 200);
    } finally {
      await t.server.stop();
    }
    const spans = serverSpans(await exported(t, collector), 'GET /api/v1/status');
    assert.equal(spans.length, 3, 'the first through the route, the others from memory');
    for (const span of spans) {
      assert.equal(span.traceId, TRACE_ID);
      assert.equal(span.attributes['http.route'], '/api/v1/status');
      assert.equal(span.attributes['http.response.status_code'], 200);
      assert.equal(span.attributes['server.address'], '127.0.0.1');
    }
  });
});

describe('traces: http/json, sampling and shutdown', () => {
  it('exports OTLP/JSON when asked, and the kernel flushes on close', async () => {
    const collector = await startOtlpCollector();
    const t = await createTestApp({
      env: { ...tracingEnv(collector, 'http/json'), OTEL_BSP_SCHEDULE_DELAY: '600000' },
    });
    try {
      await t.inject({ method: 'GET', url: '/healthz', headers: { traceparent: TRACEPARENT } });
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(collector.spans.length, 0, 'batched, not sent per span');
    } finally {
      await t.close();
    }
    try {
      const [span] = serverSpans(collector.spans, 'GET /healthz');
      assert.ok(span, 'sent by the close');
      assert.equal(span.traceId, TRACE_ID);
      assert.equal(collector.exports[0].contentType, 'application/json');
    } finally {
      await collector.close();
    }
  });

  it('a sampler that samples nothing exports nothing, and still passes the trace on', async () => {
    const collector = await startOtlpCollector();
    const t = await createTestApp({ env: { ...tracingEnv(collector), OTEL_TRACES_SAMPLER: 'always_off' } });
    try {
      assert.equal((await t.inject('/healthz')).statusCode, 200);
      await t.app.kernel.tracing.flush();
      assert.equal(collector.spans.length, 0);
    } finally {
      await t.close();
      await collector.close();
    }
  });

  it('without an endpoint tracing is off', async () => {
    const t = await createTestApp();
    try {
      assert.equal(t.app.kernel.tracing.enabled, false);
      assert.equal(t.app.kernel.tracing.traceparent(), undefined);
    } finally {
      await t.close();
    }
  });
});
