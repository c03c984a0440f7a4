import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE, testEnvFor } from '../helpers/postgres.js';
import { resolveConfig } from '../../src/config.js';
import { createAppContext, startApp, type RunningApp } from '../../src/app.js';
import { createLogger } from '../../src/lib/logger.js';

/** Parses the Prometheus text format strictly enough to fail on anything malformed. */
function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      assert.match(line, /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/, line);
      continue;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[a-zA-Z_]\w*="(?:[^"\\\n]|\\.)*",?)*\})?) (\S+)$/.exec(line);
    assert.ok(match, `malformed sample line: ${line}`);
    const value = Number(match[2]);
    assert.ok(!Number.isNaN(value) || /^nan$/i.test(match[2]), line);
    samples.set(match[1], value);
  }
  return samples;
}

async function scrape(t: TestApp): Promise<Map<string, number>> {
  // The response event is emitted once the response is written: let it run.
  await new Promise((resolve) => setImmediate(resolve));
  return parseExposition((await t.app.kernel.metrics.scrape()).body);
}

describe('metrics (docs/operations.md, Metrics)', () => {
  let t: TestApp;
  // The port makes the app collect process metrics; createTestApp starts no listener for it.
  before(async () => (t = await createTestApp({ env: { GANTRY_METRICS_PORT: '0' } })));
  after(() => t.close());

  it('counts requests by route, method and status, and rate-limit refusals by rule', async () => {
    for (let i = 0; i < 9; i++) {
      await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: {}, remoteAddress: '10.9.9.9' });
    }
    const samples = await scrape(t);
    assert.equal(samples.get('gantry_http_requests_total{route="auth.login",method="POST",status="400"}'), 8);
    assert.equal(samples.get('gantry_http_requests_total{route="auth.login",method="POST",status="429"}'), 1);
    assert.equal(
      samples.get('gantry_http_request_duration_seconds_count{route="auth.login",method="POST",status="400"}'),
      8,
    );
    assert.equal(samples.get('gantry_rate_limit_rejections_total{rule="auth.login"}'), 1);
  });

  it('labels an unknown path by the route template, never the raw URL', async () => {
    await t.inject('/no/such/thing-123');
    const samples = await scrape(t);
    assert.equal(samples.get('gantry_http_requests_total{route="/{p*}",method="GET",status="404"}'), 1);
    assert.ok(![...samples.keys()].some((key) => key.includes('thing-123')));
  });

  it('has process metrics and the database size (file sizes on SQLite)', async () => {
    const samples = await scrape(t);
    assert.ok((samples.get('process_resident_memory_bytes') ?? 0) > 0);
    if (TEST_ENGINE === 'postgres') {
      assert.ok((samples.get('gantry_db_size_bytes') ?? 0) > 0);
      assert.ok(!samples.has('gantry_db_file_bytes'), 'no SQLite file to measure');
    } else {
      assert.ok((samples.get('gantry_db_file_bytes') ?? 0) > 0);
      assert.ok(samples.has('gantry_db_wal_bytes'));
    }
  });

  it('the public listener has no /metrics', async () => {
    assert.equal((await t.inject('/metrics')).statusCode, 404);
    assert.equal((await t.inject('/api/v1/metrics')).statusCode, 404);
  });
});

describe('metrics without a scraper', () => {
  it('keeps no per-request series when GANTRY_METRICS_PORT is unset (nobody would read them)', async () => {
    const quiet = await createTestApp();
    try {
      assert.equal((await quiet.inject('/healthz')).statusCode, 200);
      assert.equal((await quiet.inject('/no/such/thing')).statusCode, 404);
      const samples = await scrape(quiet);
      assert.ok(![...samples.keys()].some((key) => key.startsWith('gantry_http_request')), [...samples.keys()].join());
      // What is read at scrape time is still there.
      assert.ok(samples.has(TEST_ENGINE === 'postgres' ? 'gantry_db_size_bytes' : 'gantry_db_file_bytes'));
    } finally {
      await quiet.close();
    }
  });
});

describe('metrics listener (GANTRY_METRICS_PORT)', () => {
  let running: RunningApp;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-test-'));
    const env = await testEnvFor(dataDir, { ...TEST_ENV, GANTRY_METRICS_PORT: '0' });
    const config = resolveConfig({ dataDir, port: 0 }, env);
    const app = await createAppContext(config, { env, logger: createLogger('silent') });
    running = await startApp(app);
  });
  after(async () => {
    await running.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is off without GANTRY_METRICS_PORT, and binds 127.0.0.1 unless GANTRY_METRICS_HOST says otherwise', () => {
    assert.equal(resolveConfig({}, {}).metrics, null);
    assert.deepEqual(resolveConfig({}, { GANTRY_METRICS_PORT: '9464' }).metrics, { port: 9464, host: '127.0.0.1' });
    assert.deepEqual(resolveConfig({}, { GANTRY_METRICS_PORT: '9464', GANTRY_METRICS_HOST: '0.0.0.0' }).metrics, {
      port: 9464,
      host: '0.0.0.0',
    });
    assert.throws(() => resolveConfig({}, { GANTRY_METRICS_PORT: 'x' }), /GANTRY_METRICS_PORT/);
    assert.equal(running.metrics?.address.address, '127.0.0.1');
  });

  it('serves GET /metrics in the text format, and nothing else; the public listener does not', async () => {
    const base = `http://127.0.0.1:${running.metrics?.address.port}`;
    const publicUri = running.servers[0].info.uri;
    assert.equal((await fetch(`${publicUri}/healthz`)).status, 200);
    const response = await fetch(`${base}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const samples = parseExposition(await response.text());
    assert.equal(samples.get('gantry_http_requests_total{route="kernel.healthz",method="GET",status="200"}'), 1);
    assert.equal((await fetch(`${base}/`)).status, 404);
    assert.equal((await fetch(`${publicUri}/metrics`)).status, 404);
  });

  it('serves the process and Node.js metrics under their standard names, Gantry’s own as gantry_*', async () => {
    assert.equal((await fetch(`${running.servers[0].info.uri}/healthz`)).status, 200);
    const response = await fetch(`http://127.0.0.1:${running.metrics?.address.port}/metrics`);
    assert.equal(response.status, 200);
    const samples = parseExposition(await response.text());
    const names = new Set([...samples.keys()].map((key) => key.replace(/\{.*$/, '')));
    // The names the common Node.js dashboards query: prom-client's defaults, unprefixed.
    const standard = [
      'process_cpu_user_seconds_total',
      'process_cpu_system_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_heap_size_total_bytes',
      'nodejs_version_info',
    ];
    assert.deepEqual(
      standard.filter((name) => !names.has(name)),
      [],
      'standard process and Node.js metrics not served',
    );
    assert.ok((samples.get('process_resident_memory_bytes') ?? 0) > 0);
    assert.ok((samples.get('nodejs_heap_size_used_bytes') ?? 0) > 0);
    // Every other metric is Gantry's own, prefixed; the runtime's are not.
    assert.deepEqual(
      [...names].filter((name) => !/^(process|nodejs)_/.test(name) && !name.startsWith('gantry_')),
      [],
    );
    assert.deepEqual(
      [...names].filter((name) => /^gantry_(process|nodejs)_/.test(name)),
      [],
    );
    assert.ok(names.has('gantry_http_requests_total'));
    assert.ok(names.has(TEST_ENGINE === 'postgres' ? 'gantry_db_size_bytes' : 'gantry_db_file_bytes'));
  });
});
