import http from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startModernMcpServer, type FakeTool, type McpFake } from './mcp-servers.js';

/**
 * An OAuth-protected MCP server on 127.0.0.1: protected resource metadata (RFC 9728, at the
 * path-inserted URL only), authorization server metadata (RFC 8414), dynamic registration
 * (RFC 7591), an authorize endpoint that consents at once (302 back with code, state, iss),
 * a token endpoint (PKCE S256, `resource` required, basic/post client auth, refresh rotation)
 * and /mcp, which answers 401 with a challenge unless given a valid access token, then
 * relays to a plain MCP fake.
 */
export interface ProtectedMcp {
  base: string;
  url: string;
  inner: McpFake;
  /** Clients registered (dynamic) or configured (pre-registered) with their secrets. */
  clients: Map<string, { secret: string | null }>;
  registrations: Array<Record<string, unknown>>;
  authorizeRequests: URLSearchParams[];
  tokenRequests: Array<{ form: Record<string, string>; authorization: string | null }>;
  /** Access tokens seen on /mcp. */
  mcpTokens: string[];
  /** Every tools/call that reached /mcp with a valid token: which token it came with. */
  toolCalls: Array<{ token: string; name: string; args: unknown }>;
  validAccess: Set<string>;
  validRefresh: Set<string>;
  expiresIn: number;
  /** Registered endpoint off: only pre-registered clients. */
  noRegistration: boolean;
  /** Advertise client_id_metadata_document_supported (an https client_id is then a public client). */
  cimd: boolean;
  /** Scopes granted to each access token (the authorize request's, kept across refreshes). */
  scopesOf: Map<string, string[]>;
  /**
   * When set and it returns scopes (given the token's), a tools/call is answered 403
   * insufficient_scope naming them (step-up, RFC 6750 §3.1); an empty list lets it through.
   */
  callScopes: ((granted: string[]) => string[]) | null;
  close(): Promise<void>;
}

export async function startProtectedMcp(tools: FakeTool[]): Promise<ProtectedMcp> {
  const inner = await startModernMcpServer({ tools });
  const codes = new Map<string, { challenge: string; clientId: string; resource: string | null; scope: string[] }>();
  const refreshScopes = new Map<string, string[]>();
  let base = '';
  const state = {
    clients: new Map<string, { secret: string | null }>(),
    registrations: [] as Array<Record<string, unknown>>,
    authorizeRequests: [] as URLSearchParams[],
    tokenRequests: [] as ProtectedMcp['tokenRequests'],
    mcpTokens: [] as string[],
    toolCalls: [] as ProtectedMcp['toolCalls'],
    validAccess: new Set<string>(),
    validRefresh: new Set<string>(),
    expiresIn: 3600,
    noRegistration: false,
    cimd: false,
    scopesOf: new Map<string, string[]>(),
    callScopes: null as ProtectedMcp['callScopes'],
  };
  const issue = (scope: string[]) => {
    const access = `mcp-at-${randomUUID()}`;
    const refresh = `mcp-rt-${randomUUID()}`;
    state.validAccess.add(access);
    state.validRefresh.add(refresh);
    state.scopesOf.set(access, scope);
    refreshScopes.set(refresh, scope);
    return {
      access_token: access,
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: state.expiresIn,
      ...(scope.length ? { scope: scope.join(' ') } : {}),
    };
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', base);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp')
      return json(200, { resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: ['tools'] });
    if (url.pathname === '/.well-known/oauth-authorization-server')
      return json(200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        ...(state.noRegistration ? {} : { registration_endpoint: `${base}/register` }),
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        authorization_response_iss_parameter_supported: true,
        ...(state.cimd ? { client_id_metadata_document_supported: true } : {}),
      });
    if (url.pathname === '/register' && req.method === 'POST') {
      const meta = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      state.registrations.push(meta);
      const id = `dcr-${randomUUID()}`;
      const secret = meta.token_endpoint_auth_method === 'none' ? null : `dcr-secret-${randomUUID()}`;
      state.clients.set(id, { secret });
      return json(201, { ...meta, client_id: id, ...(secret ? { client_secret: secret } : {}) });
    }
    if (url.pathname === '/authorize') {
      state.authorizeRequests.push(url.searchParams);
      const p = url.searchParams;
      const code = `mcp-code-${randomUUID()}`;
      codes.set(code, {
        challenge: p.get('code_challenge') ?? '',
        clientId: p.get('client_id') ?? '',
        resource: p.get('resource'),
        scope: (p.get('scope') ?? '').split(' ').filter(Boolean),
      });
      const back = new URL(p.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', p.get('state') ?? '');
      back.searchParams.set('iss', base);
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
      const authorization = req.headers.authorization ?? null;
      state.tokenRequests.push({ form, authorization });
      let clientId = form.client_id;
      let secret = form.client_secret ?? null;
      if (authorization?.startsWith('Basic ')) {
        const [id, s] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
        clientId = decodeURIComponent(id);
        secret = decodeURIComponent(s);
      }
      const client = state.cimd && clientId?.startsWith('https://') ? { secret: null } : state.clients.get(clientId);
      if (!client || (client.secret !== null && client.secret !== secret))
        return json(401, { error: 'invalid_client' });
      if (form.resource !== `${base}/mcp`) return json(400, { error: 'invalid_target' });
      if (form.grant_type === 'authorization_code') {
        const code = codes.get(form.code);
        codes.delete(form.code);
        if (!code || code.clientId !== clientId || code.resource !== form.resource)
          return json(400, { error: 'invalid_grant' });
        if (
          createHash('sha256')
            .update(form.code_verifier ?? '')
            .digest('base64url') !== code.challenge
        )
          return json(400, { error: 'invalid_grant' });
        return json(200, issue(code.scope));
      }
      if (form.grant_type === 'refresh_token') {
        if (!state.validRefresh.delete(form.refresh_token)) return json(400, { error: 'invalid_grant' });
        return json(200, issue(refreshScopes.get(form.refresh_token) ?? []));
      }
      return json(400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname === '/mcp') {
      const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!state.validAccess.has(token))
        return json(
          401,
          { error: 'invalid_token' },
          {
            'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="tools"`,
          },
        );
      state.mcpTokens.push(token);
      const granted = state.scopesOf.get(token) ?? [];
      const needed = state.callScopes && body.includes('"tools/call"') ? state.callScopes(granted) : [];
      if (needed.length > 0)
        return json(
          403,
          { error: 'insufficient_scope' },
          {
            'www-authenticate': `Bearer error="insufficient_scope", scope="${needed.join(' ')}", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
          },
        );
      try {
        const message = JSON.parse(body.toString('utf8')) as { method?: string; params?: Record<string, unknown> };
        if (message.method === 'tools/call')
          state.toolCalls.push({ token, name: String(message.params?.name), args: message.params?.arguments });
      } catch {
        // Not JSON (a GET stream, a DELETE): no call to record.
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers.set(k, v);
      const answer = await fetch(inner.url, {
        method: req.method,
        headers,
        body: body.length ? new Uint8Array(body) : undefined,
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding') out[k] = v;
      });
      res.writeHead(answer.status, out);
      return res.end(Buffer.from(await answer.arrayBuffer()));
    }
    json(404, {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    base,
    url: `${base}/mcp`,
    inner,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await inner.close();
    },
  });
}
