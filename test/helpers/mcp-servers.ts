import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as LegacyServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Server as ModernServer, createMcpHandler } from '@modelcontextprotocol/server';
import { randomUUID } from 'node:crypto';

export interface FakeTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** MCP tool annotations (destructiveHint...), listed as given. */
  annotations?: Record<string, unknown>;
}

export interface McpFakeOptions {
  tools: FakeTool[];
  pageSize?: number;
  /** Answers page N (0-based) by destroying the connection instead. */
  dieOnPage?: number;
  /** Always answers this cursor (to test the repeated-cursor stop). */
  stuckCursor?: string;
}

export interface McpFake {
  url: string;
  calls: Array<{ name: string; args: unknown }>;
  /** Every request: its JSON-RPC method, HTTP headers and parsed body. */
  requests: Array<{ method: string | null; headers: http.IncomingHttpHeaders; body?: Record<string, unknown> }>;
  options: McpFakeOptions;
  /** A 2025-era server forgets its sessions (as on a restart): their requests get 404. */
  dropSessions?(): void;
  close(): Promise<void>;
}

function page(options: McpFakeOptions, cursor: string | undefined) {
  const size = options.pageSize ?? 100;
  if (options.stuckCursor) return { tools: options.tools.slice(0, 1), nextCursor: options.stuckCursor };
  const start = cursor ? Number(cursor.replace('c', '')) : 0;
  const slice = options.tools.slice(start, start + size);
  const next = start + size < options.tools.length ? `c${start + size}` : undefined;
  return { tools: slice, ...(next ? { nextCursor: next } : {}) };
}

function pageIndex(options: McpFakeOptions, cursor: string | undefined): number {
  const size = options.pageSize ?? 100;
  return cursor ? Math.floor(Number(cursor.replace('c', '')) / size) : 0;
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function callResult(name: string, args: unknown) {
  return { content: [{ type: 'text' as const, text: JSON.stringify({ tool: name, args }) }] };
}

/** A 2025-11-25 era server (SDK 1.x): initialize, Mcp-Session-Id, sessionful Streamable HTTP. */
export async function startLegacyMcpServer(options: McpFakeOptions): Promise<McpFake> {
  const calls: McpFake['calls'] = [];
  const requests: McpFake['requests'] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer(async (req, res) => {
    const body = req.method === 'POST' ? await readBody(req) : Buffer.alloc(0);
    const parsed = body.length ? JSON.parse(body.toString('utf8')) : undefined;
    requests.push({ method: parsed?.method ?? null, headers: req.headers, body: parsed });
    if (
      parsed?.method === 'tools/list' &&
      options.dieOnPage !== undefined &&
      pageIndex(options, parsed.params?.cursor) === options.dieOnPage
    ) {
      req.socket.destroy();
      return;
    }
    const sid = req.headers['mcp-session-id'] as string | undefined;
    let transport = sid ? sessions.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        res.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => void sessions.set(id, transport!),
      });
      const mcp = new LegacyServer({ name: 'legacy-fake', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async (request) => page(options, request.params?.cursor) as never);
      mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
        calls.push({ name: request.params.name, args: request.params.arguments });
        return callResult(request.params.name, request.params.arguments);
      });
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res, parsed);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    requests,
    options,
    dropSessions: () => sessions.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A 2026-07-28 era server (SDK 2.x): stateless, server/discover, Mcp-Method headers; legacy rejected. */
export async function startModernMcpServer(options: McpFakeOptions): Promise<McpFake> {
  const calls: McpFake['calls'] = [];
  const requests: McpFake['requests'] = [];
  const handler = createMcpHandler(
    () => {
      const mcp = new ModernServer({ name: 'modern-fake', version: '2.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(
        'tools/list',
        async (request) => page(options, (request.params as { cursor?: string } | undefined)?.cursor) as never,
      );
      mcp.setRequestHandler('tools/call', async (request) => {
        calls.push({ name: request.params.name, args: request.params.arguments });
        return callResult(request.params.name, request.params.arguments) as never;
      });
      return mcp;
    },
    { legacy: 'reject' },
  );
  const server = http.createServer(async (req, res) => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const parsed = body?.length ? JSON.parse(body.toString('utf8')) : undefined;
    requests.push({ method: parsed?.method ?? null, headers: req.headers, body: parsed });
    if (
      parsed?.method === 'tools/list' &&
      options.dieOnPage !== undefined &&
      pageIndex(options, parsed.params?.cursor) === options.dieOnPage
    ) {
      req.socket.destroy();
      return;
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers,
      body: body?.length ? new Uint8Array(body) : undefined,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    requests,
    options,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
