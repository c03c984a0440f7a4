import type { TraceAttributes, TraceSpan, Tracing } from '../lib/tracing.js';

type Json = Record<string, unknown>;

const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
/** MCP caps tool names at 128 characters; a longer one is cut, not exported whole. */
const NAME_MAX = 128;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown, max: number) => (typeof value === 'string' ? value.slice(0, max) : undefined);
const single = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * The MCP server span of one JSON-RPC request to the endpoint (OpenTelemetry's MCP semantic
 * conventions; docs/operations.md, Traces), whichever path answers it (the direct one,
 * direct.ts, or the SDK's): named `{method} {tool}` for a tools/call, `{method}` otherwise. It
 * continues `params._meta.traceparent` when the request carries one, linked then to the HTTP
 * span it came in; else it is the HTTP span's child. Null with tracing off, and for what is no
 * request (a notification, a response, a GET or DELETE).
 */
export function startMcpSpan(tracing: Tracing, headers: Record<string, unknown>, body: unknown): TraceSpan | null {
  if (!tracing.enabled || !isObject(body) || typeof body.method !== 'string') return null;
  if (typeof body.id !== 'string' && typeof body.id !== 'number') return null;
  const method = body.method.slice(0, 64);
  const params = isObject(body.params) ? body.params : undefined;
  const meta = isObject(params?._meta) ? params._meta : undefined;
  const tool = method === 'tools/call' ? text(params?.name, NAME_MAX) : undefined;
  const attributes: TraceAttributes = {
    'mcp.method.name': method,
    'jsonrpc.request.id': String(body.id),
    'mcp.protocol.version': single(headers['mcp-protocol-version']) ?? text(meta?.[PROTOCOL_VERSION_META_KEY], 32),
    'mcp.session.id': single(headers['mcp-session-id']),
    'network.transport': 'tcp',
    'network.protocol.name': 'http',
  };
  if (method === 'tools/call') attributes['gen_ai.operation.name'] = 'execute_tool';
  if (tool !== undefined) attributes['gen_ai.tool.name'] = tool;
  const traceparent = single(meta?.traceparent);
  return tracing.startSpan(tool === undefined ? method : `${method} ${tool}`, {
    kind: 'server',
    attributes,
    traceparent,
    tracestate: single(meta?.tracestate),
    linksIfContinued: [tracing.activeSpan()],
  });
}

/**
 * What the request was answered with, on its MCP span: a JSON-RPC error's code
 * (`rpc.response.status_code`, `error.type`), or `tool_error` for a tool's result flagged
 * `isError`. Never the message or the result.
 */
export function settleMcpSpan(tracing: Tracing, span: TraceSpan, answer: { result?: unknown; error?: unknown }): void {
  if (!span.isRecording()) return;
  const code = isObject(answer.error) ? answer.error.code : undefined;
  if (typeof code === 'number') {
    span.setAttribute('rpc.response.status_code', String(code));
    tracing.recordError(span, String(code));
  } else if (isObject(answer.result) && answer.result.isError === true) tracing.recordError(span, 'tool_error');
}
