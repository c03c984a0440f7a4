import http from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/** A fake external OAuth provider on 127.0.0.1: codes, PKCE S256, refresh rotation, a check URL. */
export interface FakeProvider {
  base: string;
  /** Registers a code as the provider's consent screen would, bound to a PKCE challenge. */
  issueCode(challenge: string | null): string;
  /** Refresh tokens that the provider refuses (invalid_grant), e.g. revoked by the user. */
  revoked: Set<string>;
  validRefresh: Set<string>;
  validAccess: Set<string>;
  tokenRequests: Array<Record<string, string>>;
  /** Answer every token request with this expires_in. */
  expiresIn: number;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const codes = new Map<string, string | null>();
  const state: Omit<FakeProvider, 'base' | 'close' | 'issueCode'> = {
    revoked: new Set(),
    validRefresh: new Set(),
    validAccess: new Set(),
    tokenRequests: [],
    expiresIn: 3600,
  };
  const issue = () => {
    const access = `at-${randomUUID()}`;
    const refresh = `rt-${randomUUID()}`;
    state.validAccess.add(access);
    state.validRefresh.add(refresh);
    return {
      access_token: access,
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: state.expiresIn,
      scope: 'repo read:user',
    };
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/token' && req.method === 'POST') {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      state.tokenRequests.push(form);
      if (form.client_id !== 'gh-client' || form.client_secret !== 'gh-secret')
        return json(401, { error: 'invalid_client' });
      if (form.grant_type === 'authorization_code') {
        if (!codes.has(form.code)) return json(400, { error: 'invalid_grant' });
        const challenge = codes.get(form.code);
        codes.delete(form.code);
        if (
          challenge &&
          createHash('sha256')
            .update(form.code_verifier ?? '')
            .digest('base64url') !== challenge
        )
          return json(400, { error: 'invalid_grant' });
        return json(200, issue());
      }
      if (form.grant_type === 'refresh_token') {
        if (state.revoked.has(form.refresh_token) || !state.validRefresh.has(form.refresh_token))
          return json(400, { error: 'invalid_grant' });
        state.validRefresh.delete(form.refresh_token);
        return json(200, issue());
      }
      return json(400, { error: 'unsupported_grant_type' });
    }
    if (req.url === '/check') {
      const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      return state.validAccess.has(token) ? json(200, { login: 'octo' }) : json(401, { message: 'Bad credentials' });
    }
    json(404, {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state as FakeProvider, {
    base: `http://127.0.0.1:${port}`,
    issueCode(challenge: string | null) {
      const code = `code-${randomUUID()}`;
      codes.set(code, challenge);
      return code;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

export const providerEnv = (base: string): NodeJS.ProcessEnv => ({
  GANTRY_ALLOW_PRIVATE_NETWORKS: 'true',
  GANTRY_CONNECTOR_GITHUB_CLIENT_ID: 'gh-client',
  GANTRY_CONNECTOR_GITHUB_CLIENT_SECRET: 'gh-secret',
  GANTRY_CONNECTOR_GITHUB_AUTHORIZE_URL: `${base}/authorize`,
  GANTRY_CONNECTOR_GITHUB_TOKEN_URL: `${base}/token`,
  GANTRY_CONNECTOR_GITHUB_CHECK_URL: `${base}/check`,
  GANTRY_WEB_URL: 'https://app.example.test',
});
