// The floor of any MCP gateway built on the official SDK, for bench/mcp.bench.ts: an SDK 2.x
// server (stateless, as Gantry's 2026-07-28 endpoint) whose tools/call is handed to the
// upstream over one SDK 2.x client session, opened at start-up. No authentication, rate limit,
// SQL, audit or tool catalog: what is left is the two SDK hops a gateway cannot skip.
// Usage: mcp-bare-relay.ts <upstream MCP URL>. Prints "relay listening on <origin>" when ready.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import { serveMcp } from './mcp-http.js';

const client = new Client({ name: 'bench-relay', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));

const relay = createMcpHandler(
  () => {
    const mcp = new Server({ name: 'bench-relay', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler('tools/call', async (request) => (await client.callTool(request.params)) as never);
    return mcp;
  },
  { legacy: 'reject' },
);
serveMcp('relay', () => relay);
