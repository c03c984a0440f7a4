import type { Logger } from './logger.js';
import type { TracingConfig } from './tracing-config.js';
import type { SpanOptions, TraceSpan, Tracing } from './tracing-types.js';

export type { TraceAttributes, TraceSpan, Tracing } from './tracing-types.js';

const NOOP_SPAN: TraceSpan = Object.freeze({
  setAttribute: () => NOOP_SPAN,
  setAttributes: () => NOOP_SPAN,
  addEvent: () => NOOP_SPAN,
  updateName: () => NOOP_SPAN,
  isRecording: () => false,
  end: () => undefined,
});

/** Tracing off: every call does nothing and nothing of OpenTelemetry is loaded. */
export const NO_TRACING: Tracing = Object.freeze({
  enabled: false,
  startSpan: () => NOOP_SPAN,
  inSpan: <T>(_name: string, _options: SpanOptions | undefined, fn: (span: TraceSpan) => T) => fn(NOOP_SPAN),
  withSpan: <T>(_span: TraceSpan, fn: () => T) => fn(),
  enter: () => undefined,
  activeSpan: () => NOOP_SPAN,
  traceparent: () => undefined,
  inject: () => undefined,
  recordError: () => undefined,
  flush: async () => undefined,
  shutdown: async () => undefined,
});

/**
 * The kernel's tracing: off without an endpoint; on, OpenTelemetry's SDK is imported now, and
 * only now, so a server that exports no traces never loads it (docs/operations.md, Memory).
 */
export async function createTracing(config: TracingConfig | null, logger: Logger): Promise<Tracing> {
  if (config === null) return NO_TRACING;
  const { startTracing } = await import('./tracing-sdk.js');
  return startTracing(config, logger);
}
