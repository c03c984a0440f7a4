import { ConfigError, parseBool, parsePositive, parseUrl } from '../config-values.js';

/** The samplers of the OpenTelemetry SDK environment specification (OTEL_TRACES_SAMPLER). */
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

const PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/**
 * Where and how spans are exported (docs/operations.md, Traces), read from the standard
 * OpenTelemetry variables only; null: no tracing, and nothing of OpenTelemetry is loaded.
 */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  readonly endpoint: string;
  readonly protocol: (typeof PROTOCOLS)[number];
  readonly serviceName: string;
  readonly sampler: SamplerName;
  /** The ratio of the *traceidratio samplers (OTEL_TRACES_SAMPLER_ARG), 1 by default. */
  readonly ratio: number;
  /**
   * OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS as given (`k=v,k2=v2`,
   * the second winning), parsed by OpenTelemetry's own parser when tracing starts. They often
   * carry a collector's API key: never logged.
   */
  readonly headers: readonly string[];
  /** OTEL_RESOURCE_ATTRIBUTES as given (`k=v,...`). */
  readonly resourceAttributes: string;
  /** Milliseconds an export may take (OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, OTEL_EXPORTER_OTLP_TIMEOUT). */
  readonly exportTimeoutMs: number;
  /** The batch span processor's OTEL_BSP_* settings, the specification's defaults otherwise. */
  readonly batch: {
    readonly scheduledDelayMs: number;
    readonly maxQueueSize: number;
    readonly maxExportBatchSize: number;
  };
}

const set = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

/**
 * The OTLP traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else
 * OTEL_EXPORTER_OTLP_ENDPOINT with `v1/traces` appended (the specification's rule for the
 * signal-less variable); undefined when neither is set.
 */
function endpointOf(env: NodeJS.ProcessEnv): string | undefined {
  const traces = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (traces) return parseUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces);
  const base = set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!base) return undefined;
  return `${parseUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base)}/v1/traces`;
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[], hint = ''): T {
  const lower = value.toLowerCase() as T;
  if (!allowed.includes(lower))
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got "${value}")${hint}`);
  return lower;
}

function whole(name: string, raw: string | undefined, fallback: number): number {
  return raw === undefined ? fallback : Math.floor(parsePositive(name, raw));
}

/**
 * The tracing configuration from the environment, or null when no endpoint is set, the SDK is
 * disabled (OTEL_SDK_DISABLED=true) or the traces exporter is `none`. A value Gantry cannot
 * honour (the grpc protocol, an unknown sampler) is refused at start: spans that silently go
 * nowhere are worse than a clear line.
 */
export function tracingConfig(env: NodeJS.ProcessEnv): TracingConfig | null {
  if (parseBool('OTEL_SDK_DISABLED', set(env.OTEL_SDK_DISABLED) ?? false)) return null;
  const exporter = set(env.OTEL_TRACES_EXPORTER);
  if (exporter && oneOf('OTEL_TRACES_EXPORTER', exporter, ['otlp', 'none']) === 'none') return null;
  const endpoint = endpointOf(env);
  if (endpoint === undefined) return null;
  const protocolName = set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL)
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = oneOf(
    protocolName,
    set(env[protocolName]) ?? 'http/protobuf',
    PROTOCOLS,
    "; grpc is not supported: point it at the collector's OTLP/HTTP port (4318)",
  );
  const sampler = oneOf('OTEL_TRACES_SAMPLER', set(env.OTEL_TRACES_SAMPLER) ?? 'parentbased_always_on', SAMPLERS);
  const ratioText = set(env.OTEL_TRACES_SAMPLER_ARG);
  const ratio = ratioText === undefined ? 1 : Number(ratioText);
  if (sampler.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1))
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (got "${ratioText}")`);
  const timeoutName = set(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT)
    ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'
    : 'OTEL_EXPORTER_OTLP_TIMEOUT';
  return Object.freeze({
    endpoint,
    protocol,
    serviceName: set(env.OTEL_SERVICE_NAME) ?? 'gantry',
    sampler,
    ratio,
    headers: Object.freeze(
      [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS].filter((h): h is string => !!set(h)),
    ),
    resourceAttributes: set(env.OTEL_RESOURCE_ATTRIBUTES) ?? '',
    exportTimeoutMs: whole(timeoutName, set(env[timeoutName]), 10_000),
    batch: Object.freeze({
      scheduledDelayMs: whole('OTEL_BSP_SCHEDULE_DELAY', set(env.OTEL_BSP_SCHEDULE_DELAY), 5_000),
      maxQueueSize: whole('OTEL_BSP_MAX_QUEUE_SIZE', set(env.OTEL_BSP_MAX_QUEUE_SIZE), 2_048),
      maxExportBatchSize: whole('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', set(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE), 512),
    }),
  });
}
