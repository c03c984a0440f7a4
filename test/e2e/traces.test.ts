import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGantry } from '../helpers/spawn.js';
import { startOtlpCollector, tracingEnv } from '../helpers/otlp-collector.js';

/**
 * OpenTelemetry's SDK packages, as node's module log names them when they are loaded from
 * node_modules (build.mjs leaves them out of the bundle). `@opentelemetry/api` is not among
 * them: prom-client loads it for its exemplars whether or not traces are on.
 */
const SDK_MODULE = /node_modules\/@opentelemetry\/(?!api\/)[a-z-]+\//;

describe('traces from the built binary (docs/operations.md, Traces)', () => {
  it('with no OTEL_EXPORTER_OTLP_*ENDPOINT, serving requests loads nothing of the OpenTelemetry SDK', async () => {
    // NODE_DEBUG=module: node tells every module it loads from a file, on stderr.
    const g = await spawnGantry({ env: { NODE_DEBUG: 'module', OTEL_EXPORTER_OTLP_ENDPOINT: '' } });
    try {
      const traceparent = `00-${'d'.repeat(32)}-${'e'.repeat(16)}-01`;
      assert.equal((await fetch(`${g.url}/healthz`, { headers: { traceparent } })).status, 200);
      assert.equal((await fetch(`${g.url}/api/v1/status`)).status, 200);
      assert.match(g.stderr(), /node_modules\/better-sqlite3\//, 'the module log lists what was loaded');
      assert.doesNotMatch(g.stderr(), SDK_MODULE);
    } finally {
      assert.equal(await g.stop(), 0);
    }
  });

  it('with an endpoint, it exports the spans of its requests, the last ones when it stops', async () => {
    const collector = await startOtlpCollector();
    try {
      const g = await spawnGantry({
        // A batch delay longer than the test: only the shutdown sends them.
        env: { ...tracingEnv(collector), OTEL_BSP_SCHEDULE_DELAY: '600000', NODE_DEBUG: 'module' },
      });
      try {
        const traceparent = `00-${'d'.repeat(32)}-${'e'.repeat(16)}-01`;
        assert.equal((await fetch(`${g.url}/healthz`, { headers: { traceparent } })).status, 200);
        assert.match(g.stderr(), SDK_MODULE, 'the SDK is loaded when configured');
        assert.equal(collector.spans.length, 0, 'batched, nothing sent yet');
      } finally {
        assert.equal(await g.stop(), 0);
      }
      const span = collector.spans.find((s) => s.name === 'GET /healthz');
      assert.ok(span, `exported at shutdown: ${collector.spans.map((s) => s.name).join(', ')}`);
      assert.equal(span.traceId, 'd'.repeat(32));
      assert.equal(span.parentSpanId, 'e'.repeat(16));
      assert.equal(span.kind, 'server');
      assert.equal(span.resource['service.name'], 'gantry');
    } finally {
      await collector.close();
    }
  });
});
