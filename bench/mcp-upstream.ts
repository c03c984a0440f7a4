// The upstream of bench/mcp.bench.ts, in a process of its own: a 2026-07-28 MCP server (SDK
// 2.x, stateless, JSON answers) on 127.0.0.1 with `echo` and 999 other tools at /mcp, listed by
// pages of 100, and `echo` alone at /one/mcp. Prints "upstream listening on <origin>" when ready.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';

const PAGE = 100;
const all = [
  {
    name: 'echo',
    description: 'Answers its arguments',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  },
  ...Array.from({ length: 999 }, (_, i) => ({
    name: `tool_${String(i).padStart(3, '0')}`,
    description: `Tool number ${i}`,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  })),
];

const handlerOf = (tools: typeof all) =>
  createMcpHandler(
    () => {
      const mcp = new Server({ name: 'bench-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler('tools/list', async (request) => {
        const cursor = (request.params as { cursor?: string } | undefined)?.cursor;
        const start = cursor ? Number(cursor) : 0;
        const next = start + PAGE < tools.length ? String(start + PAGE) : undefined;
        return { tools: tools.slice(start, start + PAGE), ...(next ? { nextCursor: next } : {}) } as never;
      });
      mcp.setRequestHandler('tools/call', async (request) => {
        if (request.params.name !== 'echo') return { content: [{ type: 'text', text: 'ok' }] } as never;
        return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] } as never;
      });
      return mcp;
    },
    { legacy: 'reject' },
  );
const many = handlerOf(all);
const one = handlerOf(all.slice(0, 1));

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const server = http.createServer(async (req, res) => {
  const body = req.method === 'POST' ? await readBody(req) : undefined;
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const response = await (req.url?.startsWith('/one/') ? one : many).fetch(
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
  process.stdout.write(`upstream listening on http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
