// The upstream MCP server behind Gantry in the conformance run: the test tools that the official
// suite's tools-* and related scenarios call by name (docs/mcp-conformance.md lists them), served
// by the official SDK over Streamable HTTP (2025-11-25 era: sessions, SSE, resumable streams).
// Pointed at directly, it passes those scenarios itself (test/e2e/mcp-conformance-upstream.test.ts),
// so a failure through Gantry is Gantry's.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { type EventStore, StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CreateMessageResultSchema,
  ElicitResultSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

interface TestTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  run(args: Record<string, unknown>, extra: Extra, upstream: Session): Promise<CallToolResult>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
}

export interface ConformanceUpstream {
  /** The Streamable HTTP endpoint, http://127.0.0.1:PORT/mcp. */
  url: string;
  /** Names of the tools called, in order (to see that a call reached the upstream). */
  calls: string[];
  /** Every Authorization header received (the upstream itself asks for none). */
  authorizations: Set<string>;
  close(): Promise<void>;
}

// A 1x1 red PNG and a minimal WAV, as in the suite's reference server.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const NO_ARGS = { type: 'object', properties: {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

async function elicit(extra: Extra, message: string, requestedSchema: Record<string, unknown>) {
  const result = await extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema } } as ServerRequest,
    ElicitResultSchema,
  );
  return `action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
}

const TOOLS: TestTool[] = [
  {
    name: 'test_simple_text',
    description: 'Returns simple text content',
    inputSchema: NO_ARGS,
    run: async () => text('This is a simple text response for testing.'),
  },
  {
    name: 'test_image_content',
    description: 'Returns image content',
    inputSchema: NO_ARGS,
    run: async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
  },
  {
    name: 'test_audio_content',
    description: 'Returns audio content',
    inputSchema: NO_ARGS,
    run: async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
  },
  {
    name: 'test_embedded_resource',
    description: 'Returns an embedded resource',
    inputSchema: NO_ARGS,
    run: async () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  },
  {
    name: 'test_multiple_content_types',
    description: 'Returns text, image and resource content',
    inputSchema: NO_ARGS,
    run: async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  },
  {
    name: 'test_tool_with_logging',
    description: 'Sends three log messages while it runs',
    inputSchema: NO_ARGS,
    run: async (_args, extra) => {
      for (const [i, message] of [
        'Tool execution started',
        'Tool processing data',
        'Tool execution completed',
      ].entries()) {
        if (i > 0) await sleep(50);
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: message } });
      }
      return text('Tool with logging executed successfully');
    },
  },
  {
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50 and 100 of 100 while it runs',
    inputSchema: NO_ARGS,
    run: async (_args, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (progress > 0) await sleep(50);
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
          });
        }
      }
      return text(String(progressToken ?? 'no progress token'));
    },
  },
  {
    name: 'test_error_handling',
    description: 'Always fails',
    inputSchema: NO_ARGS,
    run: async () => ({
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    }),
  },
  {
    name: 'test_reconnection',
    description: 'Closes its SSE stream mid-call and answers after the client reconnects',
    inputSchema: NO_ARGS,
    run: async (_args, extra, session) => {
      session.transport.closeSSEStream(extra.requestId);
      await sleep(100);
      return text('Reconnection test completed successfully.');
    },
  },
  {
    name: 'test_sampling',
    description: 'Asks the client for an LLM completion of the prompt',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
    },
    run: async (args, extra) => {
      const result = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }],
            maxTokens: 100,
          },
        } as ServerRequest,
        CreateMessageResultSchema,
      );
      const content = result.content as { type: string; text?: string };
      return text(`LLM response: ${content.type === 'text' ? content.text : content.type}`);
    },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user for a username and an email',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
    },
    run: async (args, extra) =>
      text(
        `User response: ${await elicit(extra, String(args.message), {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        })}`,
      ),
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicits a form whose fields of every primitive type have defaults',
    inputSchema: NO_ARGS,
    run: async (_args, extra) =>
      text(
        `Elicitation completed: ${await elicit(extra, 'Please review and update the form fields with defaults', {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: {
              type: 'string',
              description: 'User status',
              enum: ['active', 'inactive', 'pending'],
              default: 'active',
            },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
          required: [],
        })}`,
      ),
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicits a form with the five kinds of enum',
    inputSchema: NO_ARGS,
    run: async (_args, extra) =>
      text(
        `Elicitation completed: ${await elicit(extra, 'Please select options from the enum fields', {
          type: 'object',
          properties: {
            untitledSingle: {
              type: 'string',
              description: 'Select one option',
              enum: ['option1', 'option2', 'option3'],
            },
            titledSingle: {
              type: 'string',
              description: 'Select one option with titles',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              description: 'Select one option (legacy)',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: {
              type: 'array',
              description: 'Select multiple options',
              minItems: 1,
              maxItems: 3,
              items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            },
            titledMulti: {
              type: 'array',
              description: 'Select multiple options with titles',
              minItems: 1,
              maxItems: 3,
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
          required: [],
        })}`,
      ),
  },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
      },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
    run: async (args) => text(`JSON Schema 2020-12 tool called with ${JSON.stringify(args)}`),
  },
];

/** Keeps every event of every stream, so that a client reconnecting with Last-Event-ID gets what it missed. */
function memoryEventStore(): EventStore {
  const events: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  return {
    async storeEvent(streamId, message) {
      const id = `${streamId}::${String(events.length).padStart(8, '0')}`;
      events.push({ id, streamId, message });
      return id;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const at = events.findIndex((e) => e.id === lastEventId);
      const streamId = lastEventId.split('::')[0];
      for (const event of events.slice(at + 1)) if (event.streamId === streamId) await send(event.id, event.message);
      return streamId;
    },
  };
}

async function newSession(calls: string[], sessions: Map<string, Session>): Promise<Session> {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: memoryEventStore(),
    // The reconnection delay the server asks for after it closes a stream (SSE `retry:`).
    retryInterval: 500,
    onsessioninitialized: (id) => void sessions.set(id, session),
  });
  const session: Session = { transport };
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  const mcp = new Server(
    { name: 'gantry-conformance-upstream', version: '1.0.0' },
    { capabilities: { tools: {}, logging: {} } },
  );
  mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })) as never,
  }));
  mcp.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    calls.push(request.params.name);
    if (!tool) return { isError: true, content: [{ type: 'text', text: `Unknown tool ${request.params.name}` }] };
    return tool.run(request.params.arguments ?? {}, extra, session);
  });
  await mcp.connect(transport);
  return session;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** DNS rebinding protection, as the suite expects of a server on loopback: Host and Origin must name loopback. */
function foreignHost(req: http.IncomingMessage): boolean {
  const hostname = (host: string) => new URL(`http://${host}`).hostname;
  try {
    if (!LOOPBACK.has(hostname(req.headers.host ?? ''))) return true;
    const origin = req.headers.origin;
    return origin !== undefined && !LOOPBACK.has(new URL(origin).hostname);
  } catch {
    return true;
  }
}

function jsonRpcError(res: http.ServerResponse, status: number, message: string) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  return body ? JSON.parse(body) : undefined;
}

/** Starts the upstream on 127.0.0.1 (a free port). */
export async function startConformanceUpstream(): Promise<ConformanceUpstream> {
  const calls: string[] = [];
  const sessions = new Map<string, Session>();
  const authorizations = new Set<string>();
  const server = http.createServer(async (req, res) => {
    if (req.headers.authorization) authorizations.add(req.headers.authorization);
    try {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return jsonRpcError(res, 404, 'Not found');
      if (foreignHost(req)) return jsonRpcError(res, 403, 'Forbidden: Host or Origin is not loopback');
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const sid = req.headers['mcp-session-id'];
      let session = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (!session) {
        if (sid !== undefined) return jsonRpcError(res, 404, 'Session not found');
        if ((body as { method?: string } | undefined)?.method !== 'initialize')
          return jsonRpcError(res, 400, 'Bad Request: no session');
        session = await newSession(calls, sessions);
      }
      await session.transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) jsonRpcError(res, 500, String(error));
      else res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    authorizations,
    close: async () => {
      await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => {})));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
