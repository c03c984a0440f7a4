// The upstream of bench/mcp.bench.ts, in a process of its own: a 2026-07-28 MCP server (SDK
// 2.x, stateless, JSON answers) on 127.0.0.1 with `echo` and 999 other tools at /mcp, listed by
// pages of 100, and `echo` alone at /one/mcp. Prints "upstream listening on <origin>" when ready.
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import { serveMcp } from './mcp-http.js';

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

serveMcp('upstream', (path) => (path.startsWith('/one/') ? one : many));
