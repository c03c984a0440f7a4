// The node:http side of the MCP bench's helper processes (bench/mcp-upstream.ts,
// bench/mcp-bare-relay.ts): each request handed to an SDK web handler, its answer written whole.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type WebHandler = { fetch(request: Request): Promise<Response> };

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Serves on 127.0.0.1 (any port) and prints "<label> listening on <origin>" when ready. */
export function serveMcp(label: string, handlerFor: (path: string) => WebHandler): void {
  const server = http.createServer(async (req, res) => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const response = await handlerFor(req.url ?? '/').fetch(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        body: body?.length ? new Uint8Array(body) : undefined,
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${label} listening on http://127.0.0.1:${port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
