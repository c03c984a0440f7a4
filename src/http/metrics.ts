import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Server } from '@hapi/hapi';
import type { Metrics } from '../lib/metrics.js';

/** Seconds; from a cached read to a slow upstream MCP call. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The status a request was answered with (a Boom's own for an error), 0 when none was. */
export function statusOf(request: Request): number {
  const response = request.response as { isBoom?: boolean; output?: { statusCode: number }; statusCode?: number };
  if (!response) return 0;
  return response.isBoom ? (response.output?.statusCode ?? 500) : (response.statusCode ?? 0);
}

/**
 * Counts every answered request by route (its id, else its path template: never the raw URL,
 * whose ids would make one series per resource), method and status, with its latency. Only
 * when something scrapes (docs/operations.md, Metrics): labelling and observing every request
 * is a measurable share of a cached answer's cost, paid for nobody otherwise.
 */
export function registerRequestMetrics(server: Server, metrics: Metrics): RequestCounter | null {
  if (!metrics.served) return null;
  const labels = ['route', 'method', 'status'] as const;
  const requests = metrics.counter('gantry_http_requests_total', 'HTTP requests answered', labels);
  const duration = metrics.histogram(
    'gantry_http_request_duration_seconds',
    'Time from request received to response sent',
    labels,
    LATENCY_BUCKETS,
  );
  const count: RequestCounter = (route, method, status, seconds) => {
    const values = { route, method, status: String(status) };
    requests.inc(values);
    duration.observe(values, seconds);
  };
  server.events.on('response', (request) => {
    const end = request.info.completed || request.info.responded || Date.now();
    count(
      request.route.settings.id ?? request.route.path,
      request.method.toUpperCase(),
      statusOf(request),
      Math.max(0, end - request.info.received) / 1000,
    );
  });
  return count;
}

/** Counts one answered request (route id or template, method, status, seconds taken). */
export type RequestCounter = (route: string, method: string, status: number, seconds: number) => void;

export interface MetricsListener {
  /** Where it listens (the port is the real one when 0 was asked). */
  readonly address: AddressInfo;
  stop(): Promise<void>;
}

/**
 * The Prometheus listener (GANTRY_METRICS_PORT): `GET /metrics` and nothing else, on its own
 * port and address (127.0.0.1 by default), never on the public listener.
 */
export async function startMetricsListener(metrics: Metrics, port: number, host: string): Promise<MetricsListener> {
  const server: HttpServer = createHttpServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.scrape().then(
      ({ body, contentType }) => res.writeHead(200, { 'Content-Type': contentType }).end(body),
      () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('scrape failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    address: server.address() as AddressInfo,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
