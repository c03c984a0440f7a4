import assert from 'node:assert/strict';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp } from './app.js';
import { bearer } from './factories.js';
import { mcpSetup, mcpTokens } from './mcp-oauth.js';

const C = '/api/v1/connectors';

/** The endpoint on the test app's real listener (tokens name the configured public URL; the socket is this one). */
export const endpointOf = (t: TestApp) => `${t.server.info.uri}/api/v1/mcp`;

/**
 * A user who owns an account, a session to manage connectors with, and an MCP access token
 * bound to the default workspace, obtained through the OAuth dance (consent with a workspace).
 */
export async function mcpUser(t: TestApp, resource?: string) {
  const setup = await mcpSetup(t);
  const session = await t.app.services.identity.sessions.start(setup.user.id);
  const tokens = await mcpTokens(t, setup, resource ? { query: { resource } } : {});
  return { ...setup, headers: bearer(session.accessToken), token: tokens.access_token };
}

export type McpUser = Awaited<ReturnType<typeof mcpUser>>;

/** An mcp-generic instance at `url` in the user's default workspace, with a bearer credential, synced and tested. */
export async function addInstance(t: TestApp, user: McpUser, url: string, extra: Record<string, unknown> = {}) {
  const json = async (method: string, path: string, payload?: object) => {
    const res = await t.inject({ method, url: `${C}${path}`, headers: user.headers, payload });
    assert.ok(res.statusCode < 300, `${method} ${path}: ${res.statusCode} ${res.payload}`);
    return JSON.parse(res.payload).data;
  };
  const inst = await json('POST', '/instances', { connectorKey: 'mcp-generic', config: { url }, ...extra });
  await json('POST', `/instances/${inst.id}/credentials`, {
    credType: 'bearer_token',
    credentials: { token: 'upstream-secret' },
  });
  const tools = (await json('POST', `/instances/${inst.id}/sync-tools`)) as Array<{ id: string; toolKey: string }>;
  assert.equal((await json('POST', `/instances/${inst.id}/test`)).healthy, true);
  return {
    id: inst.id as string,
    toolId: (key: string) => tools.find((x) => x.toolKey === key)!.id,
    patchTool: (key: string, body: object) =>
      json('PATCH', `/instances/${inst.id}/tools/${tools.find((x) => x.toolKey === key)!.id}`, body),
  };
}

/** SDK 1.x client (2025-11-25: initialize, Mcp-Session-Id) with a bearer token. */
export async function legacyClient(endpoint: string, token: string) {
  const client = new LegacyClient({ name: 'legacy-test', version: '1.0.0' });
  const transport = new LegacyTransport(new URL(endpoint), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** SDK 2.x client pinned to 2026-07-28 (server/discover, stateless) with a bearer token. */
export async function modernClient(endpoint: string, token: string) {
  const client = new ModernClient(
    { name: 'modern-test', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const transport = new ModernTransport(new URL(endpoint), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/**
 * One bare 2026-07-28 request (no SDK client): the headers and `_meta` the revision puts on
 * every request, plus any extra `_meta` (a log level); the raw injected response.
 */
export function statelessRpc(
  t: TestApp,
  token: string,
  method: string,
  params: Record<string, unknown>,
  options: { name?: string; meta?: Record<string, unknown> } = {},
) {
  return t.inject({
    method: 'POST',
    url: '/api/v1/mcp',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(options.name ? { 'mcp-name': options.name } : {}),
    },
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'stateless-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
          ...options.meta,
        },
      },
    },
  });
}
