import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/** What one path of the fake document host answers. */
interface DocumentRoute {
  status?: number;
  /** An object is sent as JSON; a string as it is. */
  body: unknown;
  headers?: Record<string, string>;
  /** Waits this long before answering (a host that does not answer in time). */
  delayMs?: number;
}

/** A host of Client ID Metadata Documents on 127.0.0.1: routes set by the test, requests counted. */
export interface DocumentHost {
  base: string;
  routes: Map<string, DocumentRoute>;
  hits: Map<string, number>;
  /** Serves `doc` at `path` (client_id set to the path's own URL unless given) and returns that URL. */
  serve(path: string, doc: Record<string, unknown>, extra?: Omit<DocumentRoute, 'body'>): string;
  close(): Promise<void>;
}

/** `tls` serves https (a test certificate for 127.0.0.1): MCP SDKs use a document URL only when it is https. */
export async function startDocumentHost(options: { tls?: { key: string; cert: string } } = {}): Promise<DocumentHost> {
  const routes = new Map<string, DocumentRoute>();
  const hits = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const handler: http.RequestListener = (req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (!route) return res.writeHead(404).end();
    const send = () => {
      const body = typeof route.body === 'string' ? route.body : JSON.stringify(route.body);
      res.writeHead(route.status ?? 200, { 'content-type': 'application/json', ...route.headers }).end(body);
    };
    if (!route.delayMs) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) send();
    }, route.delayMs);
    timers.add(timer);
  };
  const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
  // Idle connections outlive the client's (Node's agent closes its idle sockets after 5 s, as a
  // Node server does by default): otherwise a request can go out on a socket the host is just
  // closing and fail with ECONNRESET, a race of the test's host, not of what is tested.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    routes,
    hits,
    serve(path, doc, extra = {}) {
      const url = `${base}${path}`;
      routes.set(path, { ...extra, body: { client_id: url, ...doc } });
      return url;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
