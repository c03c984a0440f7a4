import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import {
  type ExportResult,
  ExportResultCode,
  parseKeyPairsIntoRecord,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
// Both exporters, statically: they share their weight (otlp-exporter-base, otlp-transformer),
// and a static import is a require() in the bundle, where an import() would load these packages'
// ESM builds beside the CommonJS ones the SDK uses (two copies of @opentelemetry/api).
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { Logger } from './logger.js';
import type { SpanOptions, TraceSpan, Tracing } from './tracing-types.js';
import type { SamplerName, TracingConfig } from './tracing-config.js';

/** The instrumentation scope of every Gantry span. */
const SCOPE = 'gantry';
const VERSION = '0.1.0';

const KINDS = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT } as const;

function samplerOf(name: SamplerName, ratio: number): Sampler {
  const root = name.endsWith('always_off')
    ? new AlwaysOffSampler()
    : name.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(ratio)
      : new AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** A thenable, without assuming a native promise. */
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';

/**
 * The exporter, telling the log when exports start failing and when they work again (once
 * each, not per batch): OpenTelemetry reports failures only to its global diagnostic logger,
 * which nobody reads, and spans that go nowhere should not go unnoticed.
 */
function reporting(exporter: SpanExporter, logger: Logger, endpoint: string): SpanExporter {
  let failing = false;
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS && !failing) {
          failing = true;
          logger.warn('traces could not be exported', { endpoint, reason: result.error?.message ?? 'unknown' });
        } else if (result.code === ExportResultCode.SUCCESS && failing) {
          failing = false;
          logger.info('traces are exported again', { endpoint });
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

function exporterFor(config: TracingConfig): SpanExporter {
  const options = {
    url: config.endpoint,
    headers: Object.assign({}, ...config.headers.map((h) => parseKeyPairsIntoRecord(h))) as Record<string, string>,
    timeoutMillis: config.exportTimeoutMs,
  };
  return config.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
}

/**
 * OpenTelemetry's trace SDK behind the kernel's Tracing (src/lib/tracing.ts): one provider per
 * kernel, batch export over OTLP/HTTP, W3C trace context. Nothing is registered globally (no
 * global tracer provider, propagator or context manager): two apps in one process (tests)
 * keep their own, and the active span is this instance's AsyncLocalStorage.
 *
 * AsyncLocalStorage rather than a parent passed down every call: a span's children are made
 * layers below it (the invoke path, the vault, the upstream MCP client and the SDK's fetch for
 * a session many calls share), where a parameter would have to cross code that knows nothing
 * of traces; its cost (a promise hook) is paid only with tracing on.
 */
export function startTracing(config: TracingConfig, logger: Logger): Tracing {
  const provider = new TracerProvider({
    sampler: samplerOf(config.sampler, config.ratio),
    resource: defaultResource().merge(
      resourceFromAttributes({
        ...parseKeyPairsIntoRecord(config.resourceAttributes),
        'service.name': config.serviceName,
        'service.version': VERSION,
      }),
    ),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: reporting(exporterFor(config), logger, config.endpoint),
        scheduledDelayMillis: config.batch.scheduledDelayMs,
        maxQueueSize: config.batch.maxQueueSize,
        maxExportBatchSize: Math.min(config.batch.maxExportBatchSize, config.batch.maxQueueSize),
        exportTimeoutMillis: config.exportTimeoutMs,
      }),
    ],
  });
  const tracer = provider.getTracer(SCOPE, VERSION);
  const propagator = new W3CTraceContextPropagator();
  const active = new AsyncLocalStorage<Context>();
  const contextOf = (span: TraceSpan) => trace.setSpan(ROOT_CONTEXT, span as Span);
  const none = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

  /** The context `traceparent` continues, when it is well formed. */
  function remoteOf(options: SpanOptions): Context | undefined {
    if (!options.traceparent) return undefined;
    const carrier = { traceparent: options.traceparent, tracestate: options.tracestate };
    const remote = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
    return trace.getSpanContext(remote) ? remote : undefined;
  }

  function linksOf(spans: readonly TraceSpan[] | undefined): Link[] | undefined {
    if (!spans) return undefined;
    const links = spans
      .map((s) => ({ context: (s as Span).spanContext() }))
      .filter((l) => isSpanContextValid(l.context));
    return links.length > 0 ? links : undefined;
  }

  const tracing: Tracing = {
    enabled: true,
    startSpan(name, options = {}) {
      const remote = remoteOf(options);
      const linked =
        remote && options.linksIfContinued ? [...(options.links ?? []), ...options.linksIfContinued] : options.links;
      return tracer.startSpan(
        name,
        {
          kind: KINDS[options.kind ?? 'internal'],
          attributes: options.attributes,
          links: linksOf(linked),
          startTime: options.startTime,
        },
        remote ?? (options.root ? ROOT_CONTEXT : (active.getStore() ?? ROOT_CONTEXT)),
      );
    },
    inSpan(name, options, fn) {
      const span = tracing.startSpan(name, options);
      let result: ReturnType<typeof fn>;
      try {
        result = active.run(contextOf(span), fn, span);
      } catch (err) {
        tracing.recordError(span, err);
        span.end();
        throw err;
      }
      if (!isThenable(result)) {
        span.end();
        return result;
      }
      return result.then(
        (value) => {
          span.end();
          return value;
        },
        (err: unknown) => {
          tracing.recordError(span, err);
          span.end();
          throw err;
        },
      ) as typeof result;
    },
    withSpan: (span, fn) => active.run(contextOf(span), fn),
    enter(span) {
      active.enterWith(contextOf(span));
    },
    activeSpan() {
      const store = active.getStore();
      return (store && trace.getSpan(store)) || none;
    },
    traceparent(span) {
      const carrier: Record<string, string> = {};
      const ctx = span ? contextOf(span) : active.getStore();
      if (ctx) propagator.inject(ctx, carrier, defaultTextMapSetter);
      return carrier.traceparent;
    },
    inject(carrier) {
      const ctx = active.getStore();
      if (ctx) propagator.inject(ctx, carrier, defaultTextMapSetter);
    },
    recordError(span, error) {
      const code = (error as { code?: unknown } | null)?.code;
      const type =
        typeof error === 'string'
          ? error
          : typeof code === 'string' || typeof code === 'number'
            ? String(code)
            : ((error as Error | null)?.name ?? 'Error');
      span.setAttribute('error.type', type);
      // An exception event for what was thrown; a failure named by its kind (a 5xx, a tool_error) is no exception.
      if (typeof error !== 'string') span.addEvent('exception', { 'exception.type': type });
      (span as Span).setStatus({ code: SpanStatusCode.ERROR });
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
  return tracing;
}
