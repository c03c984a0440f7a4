import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

/**
 * The messages of OTLP's trace export (opentelemetry-proto: collector/trace/v1/trace_service.proto,
 * trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto), their field numbers
 * as published; what an http/protobuf exporter sends is decoded with them.
 */
const PROTO_FILES = [
  `syntax = "proto3"; package opentelemetry.proto.common.v1;
  message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3;
    double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
  message ArrayValue { repeated AnyValue values = 1; }
  message KeyValueList { repeated KeyValue values = 1; }
  message KeyValue { string key = 1; AnyValue value = 2; }
  message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4; }`,
  `syntax = "proto3"; package opentelemetry.proto.resource.v1;
  message Resource { repeated opentelemetry.proto.common.v1.KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }`,
  `syntax = "proto3"; package opentelemetry.proto.trace.v1;
  message ResourceSpans { opentelemetry.proto.resource.v1.Resource resource = 1; repeated ScopeSpans scope_spans = 2;
    string schema_url = 3; }
  message ScopeSpans { opentelemetry.proto.common.v1.InstrumentationScope scope = 1; repeated Span spans = 2;
    string schema_url = 3; }
  message Span {
    bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; fixed32 flags = 16;
    string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
    repeated opentelemetry.proto.common.v1.KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
    message Event { fixed64 time_unix_nano = 1; string name = 2;
      repeated opentelemetry.proto.common.v1.KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
    repeated Event events = 11; uint32 dropped_events_count = 12;
    message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3;
      repeated opentelemetry.proto.common.v1.KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
    repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15; }
  message Status { string message = 2; int32 code = 3; }`,
  `syntax = "proto3"; package opentelemetry.proto.collector.trace.v1;
  message ExportTraceServiceRequest { repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans = 1; }`,
];

const root = new protobuf.Root();
for (const file of PROTO_FILES) protobuf.parse(file, root);
const ExportRequest = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');

/** OTLP's SpanKind numbers (trace.proto). */
const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** Null for a root span (of this process or continued from a remote parent). */
  parentSpanId: string | null;
  name: string;
  kind: (typeof KINDS)[number];
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  links: Array<{ traceId: string; spanId: string }>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startNs: bigint;
  endNs: bigint;
  /** The resource's attributes (service.name...). */
  resource: Record<string, unknown>;
}

export interface OtlpCollector {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (spans are posted to /v1/traces under it). */
  url: string;
  spans: CollectedSpan[];
  /** Every export received: its content type and headers. */
  exports: Array<{ contentType: string; headers: http.IncomingHttpHeaders; bytes: number }>;
  close(): Promise<void>;
}

type Wire = Record<string, unknown> & { [key: string]: unknown };

/** An OTLP AnyValue (protobuf's decoded message, or OTLP/JSON's object) as a plain value. */
function plain(value: Wire | undefined): unknown {
  if (!value) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('arrayValue' in value) return ((value.arrayValue as Wire).values as Wire[] | undefined)?.map(plain) ?? [];
  return undefined;
}

const attributesOf = (list: unknown) =>
  Object.fromEntries(((list as Wire[] | undefined) ?? []).map((kv) => [kv.key as string, plain(kv.value as Wire)]));

/** A trace or span id: bytes in protobuf, hex already in OTLP/JSON; empty means none. */
const idOf = (id: unknown) => (id instanceof Uint8Array ? Buffer.from(id).toString('hex') : String(id ?? ''));

function spansOf(request: Wire): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  for (const rs of (request.resourceSpans as Wire[] | undefined) ?? []) {
    const resource = attributesOf((rs.resource as Wire | undefined)?.attributes);
    for (const ss of (rs.scopeSpans as Wire[] | undefined) ?? [])
      for (const s of (ss.spans as Wire[] | undefined) ?? []) {
        const parent = idOf(s.parentSpanId);
        out.push({
          traceId: idOf(s.traceId),
          spanId: idOf(s.spanId),
          parentSpanId: parent === '' ? null : parent,
          name: s.name as string,
          kind: KINDS[Number(s.kind ?? 0)],
          attributes: attributesOf(s.attributes),
          events: ((s.events as Wire[] | undefined) ?? []).map((e) => ({
            name: e.name as string,
            attributes: attributesOf(e.attributes),
          })),
          links: ((s.links as Wire[] | undefined) ?? []).map((l) => ({
            traceId: idOf(l.traceId),
            spanId: idOf(l.spanId),
          })),
          statusCode: Number((s.status as Wire | undefined)?.code ?? 0),
          startNs: BigInt(String(s.startTimeUnixNano ?? 0)),
          endNs: BigInt(String(s.endTimeUnixNano ?? 0)),
          resource,
        });
      }
  }
  return out;
}

/**
 * A small OTLP/HTTP traces collector on 127.0.0.1: POST /v1/traces in http/protobuf (decoded
 * with the published messages) or http/json, gzip or not, answered as a collector does (an
 * empty ExportTraceServiceResponse). With `decode: false` it only counts what it receives (the
 * bench's sink: decoding there would take CPU from the load generator).
 */
export async function startOtlpCollector(options: { decode?: boolean } = {}): Promise<OtlpCollector> {
  const decode = options.decode ?? true;
  const spans: CollectedSpan[] = [];
  const exports: OtlpCollector['exports'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const contentType = String(req.headers['content-type'] ?? '').split(';')[0];
      let body = Buffer.concat(chunks);
      exports.push({ contentType, headers: req.headers, bytes: body.length });
      const json = contentType === 'application/json';
      if (!json && contentType !== 'application/x-protobuf') return void res.writeHead(415).end();
      try {
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        if (decode) {
          const request = json
            ? (JSON.parse(body.toString('utf8')) as Wire)
            : (ExportRequest.toObject(ExportRequest.decode(body), { longs: String }) as Wire);
          spans.push(...spansOf(request));
        }
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        return;
      }
      if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The variables that send a test app's spans to `collector`, always sampled. */
export function tracingEnv(collector: OtlpCollector, protocol = 'http/protobuf'): NodeJS.ProcessEnv {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_TRACES_SAMPLER: 'always_on',
  };
}
