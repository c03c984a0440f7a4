/**
 * The kernel's tracing as its users see it (src/lib/tracing.ts makes it): apart from its two
 * implementations, so the OpenTelemetry one (tracing-sdk.ts) and the loader that imports it
 * on demand do not import each other.
 */

/** A span attribute's value, as OpenTelemetry takes it. */
type TraceValue = string | number | boolean | string[] | number[] | boolean[];
export type TraceAttributes = Record<string, TraceValue | undefined>;

export interface SpanOptions {
  /** internal (the default), server (an incoming request) or client (a call to another service). */
  kind?: 'internal' | 'server' | 'client';
  /** Never argument values, prompts, tokens or secrets (docs/operations.md, Traces). */
  attributes?: TraceAttributes;
  /**
   * A W3C traceparent to continue (an incoming header, an MCP request's
   * `params._meta.traceparent`), with its tracestate. A missing or malformed one is ignored:
   * the span is then a child of the active span, or a new trace with `root`.
   */
  traceparent?: string;
  tracestate?: string;
  /** Never a child of the active span: a new trace unless `traceparent` continues one. */
  root?: boolean;
  /** Spans this one is linked to. */
  links?: readonly TraceSpan[];
  /**
   * Spans linked only when `traceparent` is well formed and continues a trace: the transport's
   * span of an MCP request whose `params._meta` names its parent (OpenTelemetry's MCP conventions).
   */
  linksIfContinued?: readonly TraceSpan[];
  /** When it started, in milliseconds since the epoch, when before now. */
  startTime?: number;
}

/**
 * What Gantry does with a span. With tracing on it is OpenTelemetry's own span object (no
 * wrapper); off, one shared no-op object.
 */
export interface TraceSpan {
  setAttribute(key: string, value: TraceValue): unknown;
  setAttributes(attributes: TraceAttributes): unknown;
  addEvent(name: string, attributes?: TraceAttributes): unknown;
  updateName(name: string): unknown;
  /** False when sampled out or when tracing is off: skip work that only feeds attributes. */
  isRecording(): boolean;
  end(): void;
}

/**
 * Traces (docs/operations.md, Traces; docs/kernel.md, Traces): `kernel.tracing`. The active
 * span follows the async calls made under it (AsyncLocalStorage), so a child needs no parent
 * passed down; with tracing off every call is a no-op that allocates nothing.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** A new span (see SpanOptions for its parent), not made active: the caller ends it. */
  startSpan(name: string, options?: SpanOptions): TraceSpan;
  /**
   * Runs `fn` inside a new span, active while it runs (and in every async call it makes); the
   * span ends when `fn` returns or its promise settles, and a throw or rejection marks it failed.
   */
  inSpan<T>(name: string, options: SpanOptions | undefined, fn: (span: TraceSpan) => T): T;
  /** Runs `fn` with `span` active (a span started earlier, ended by its owner). */
  withSpan<T>(span: TraceSpan, fn: () => T): T;
  /**
   * Makes `span` active for the rest of the current execution and what it goes on to call:
   * for a framework hook that cannot wrap what follows it (hapi's onRequest, src/http/tracing.ts).
   */
  enter(span: TraceSpan): void;
  /** The active span; a non-recording one outside any. */
  activeSpan(): TraceSpan;
  /** The W3C traceparent of `span`, else of the active span; undefined when there is none. */
  traceparent(span?: TraceSpan): string | undefined;
  /** Writes `traceparent` (and `tracestate`) of the active span into headers or an MCP `_meta`. */
  inject(carrier: Record<string, unknown>): void;
  /**
   * Marks a span failed: status ERROR and `error.type`, the string given (a failure's kind: a
   * 5xx status, `tool_error`), else the thrown error's `code` (a DomainError's, a system
   * error's, a JSON-RPC error's number) or its name, then also an `exception` event of that
   * type. Never the message, which may quote arguments or an upstream's text.
   */
  recordError(span: TraceSpan, error: unknown): void;
  /** Exports the spans ended so far (tests; shutdown does it too). */
  flush(): Promise<void>;
  /** Exports what is left and stops (the kernel's close). */
  shutdown(): Promise<void>;
}
