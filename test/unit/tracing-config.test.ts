import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config-values.js';
import { tracingConfig } from '../../src/lib/tracing-config.js';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

describe('tracing configuration from the standard variables (docs/operations.md, Traces)', () => {
  it('is off without an endpoint, with the SDK disabled, or with the traces exporter none', () => {
    assert.equal(tracingConfig({}), null);
    assert.equal(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }), null);
    assert.equal(tracingConfig({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true' }), null);
    assert.equal(tracingConfig({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }), null);
  });

  it('appends v1/traces to the general endpoint; the traces endpoint is used as given and wins', () => {
    assert.equal(tracingConfig(ENDPOINT)?.endpoint, 'http://collector:4318/v1/traces');
    assert.equal(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })?.endpoint, 'http://c:4318/v1/traces');
    assert.equal(
      tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/otlp' })?.endpoint,
      'https://otel.example/otlp/v1/traces',
    );
    assert.equal(
      tracingConfig({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo.example/v1/traces' })?.endpoint,
      'https://tempo.example/v1/traces',
    );
  });

  it("has the specification's defaults", () => {
    assert.deepEqual(tracingConfig(ENDPOINT), {
      endpoint: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'gantry',
      sampler: 'parentbased_always_on',
      ratio: 1,
      headers: [],
      resourceAttributes: '',
      exportTimeoutMs: 10_000,
      batch: { scheduledDelayMs: 5_000, maxQueueSize: 2_048, maxExportBatchSize: 512 },
    });
  });

  it('reads the protocol, service name, sampler, headers and batch settings, the traces-specific ones first', () => {
    const config = tracingConfig({
      ...ENDPOINT,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'gantry-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=one',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=two',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500',
      OTEL_BSP_SCHEDULE_DELAY: '1000',
    });
    assert.equal(config?.protocol, 'http/json');
    assert.equal(config?.serviceName, 'gantry-eu');
    assert.equal(config?.sampler, 'parentbased_traceidratio');
    assert.equal(config?.ratio, 0.25);
    assert.deepEqual(config?.headers, ['api-key=one', 'api-key=two']);
    assert.equal(config?.exportTimeoutMs, 2500);
    assert.equal(config?.batch.scheduledDelayMs, 1000);
  });

  it('refuses what it cannot honour, naming the variable', () => {
    const refused = (env: NodeJS.ProcessEnv, pattern: RegExp) =>
      assert.throws(
        () => tracingConfig({ ...ENDPOINT, ...env }),
        (err: Error) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, pattern);
          return true;
        },
      );
    refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL .*grpc is not supported.*4318/);
    refused({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'thrift' }, /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be one of/);
    refused({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, /^OTEL_TRACES_SAMPLER must be one of always_on/);
    refused({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, /OTEL_TRACES_SAMPLER_ARG/);
    refused({ OTEL_TRACES_EXPORTER: 'zipkin' }, /^OTEL_TRACES_EXPORTER must be one of otlp, none/);
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/);
    refused({ OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: 'soon' }, /^OTEL_EXPORTER_OTLP_TRACES_TIMEOUT must be a positive/);
    refused({ OTEL_BSP_MAX_QUEUE_SIZE: '-1' }, /^OTEL_BSP_MAX_QUEUE_SIZE/);
  });
});
