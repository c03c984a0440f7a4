import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, makeUser } from '../helpers/factories.js';
import { MCP_RESOURCE, mcpSetup, mcpTokens, postToken, PRM_URL } from '../helpers/mcp-oauth.js';
import { authorizeAndAllow, authorizeQuery, basic, makeClient, pkcePair, REDIRECT } from '../helpers/oauth.js';
import { McpAuthError } from '../../src/oauth/mcp-auth.js';

// Audience separation and the MCP endpoint's verifier (docs/oauth.md, Audiences; MCP resource).
let t: TestApp;
before(async () => {
  t = await createTestApp({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

const mcp = () => t.app.services.oauth.mcp;

/** The McpAuthError a promise rejects with. */
async function refusal(promise: Promise<unknown>): Promise<McpAuthError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof McpAuthError, String(err));
    return err;
  }
  assert.fail('expected an McpAuthError');
}

/** A REST API token (no resource) with these scopes. */
async function restToken(scope: string) {
  const client = await makeClient(t, { scopes: ['email:read', 'wallet:read', 'tools:call'] });
  const user = await makeUser(t.app);
  const { verifier, challenge } = pkcePair();
  const { location } = await authorizeAndAllow(
    t,
    authorizeQuery(client.clientId, challenge, { scope }),
    user.email,
    user.password,
  );
  const res = await postToken(
    t,
    {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    },
    basic(client.clientId, client.clientSecret!),
  );
  assert.equal(res.statusCode, 200, res.payload);
  return res.json().access_token as string;
}

describe('the REST API refuses MCP tokens', () => {
  test('kernel bearer auth: 401 UNAUTHORIZED in the envelope, saying which resource the token is for', async () => {
    const setup = await mcpSetup(t);
    // wallet:read too, so only the audience can be the reason.
    const tokens = await mcpTokens(t, setup, { query: { scope: 'tools:call wallet:read' } });
    const res = await t.inject({ url: '/api/v1/wallet/me', headers: bearer(tokens.access_token) });
    assert.equal(res.statusCode, 401);
    const body = JSON.parse(res.payload);
    assert.equal(body.data, null);
    assert.equal(body.error.code, 'UNAUTHORIZED');
    assert.match(body.error.message, /for the MCP endpoint \(http:\/\/127\.0\.0\.1:8080\/api\/v1\/mcp\)/);
    assert.ok(body.meta.requestId);
    assert.match(String(res.headers['www-authenticate']), /^Bearer error="invalid_token"/);
  });

  test('userinfo answers invalid_token', async () => {
    const setup = await mcpSetup(t);
    const tokens = await mcpTokens(t, setup, { query: { scope: 'tools:call email:read' } });
    const res = await t.inject({ url: '/api/v1/oauth/userinfo', headers: bearer(tokens.access_token) });
    assert.equal(res.statusCode, 401);
    assert.equal(JSON.parse(res.payload).error, 'invalid_token');
  });

  test('a REST API token still works there (wallet:read)', async () => {
    const token = await restToken('wallet:read');
    const res = await t.inject({ url: '/api/v1/wallet/me', headers: bearer(token) });
    assert.equal(res.statusCode, 200, res.payload);
  });
});

describe('oauth.mcp.verifyToken: only MCP tokens with tools:call', () => {
  test('an MCP token gives the caller, client, scopes, workspace and expiry', async () => {
    const setup = await mcpSetup(t);
    const tokens = await mcpTokens(t, setup);
    const caller = await mcp().verifyToken(tokens.access_token);
    assert.equal(caller.userId, setup.user.id);
    assert.equal(caller.clientId, setup.client.clientId);
    assert.deepEqual(caller.scopes, ['tools:call']);
    assert.equal(caller.workspaceId, setup.defaultWorkspace);
    const now = Date.now() / 1000;
    assert.ok(caller.expiresAt > now + 3500 && caller.expiresAt <= now + 3601, String(caller.expiresAt));
    assert.ok(caller.tokenId);
    assert.ok(caller.grantId);
  });

  test('REST API tokens are invalid_token (401), even with tools:call; so are session tokens and garbage', async () => {
    // tools:call without a resource: a REST API token (bound to a workspace, yet not for MCP).
    const rest = (await mcpTokens(t, await mcpSetup(t), { query: { resource: undefined } })).access_token;
    assert.equal(decodeJwt(rest).aud, 'http://127.0.0.1:8080/api/v1');
    const err = await refusal(mcp().verifyToken(rest));
    assert.equal(err.error, 'invalid_token');
    assert.equal(err.status, 401);
    assert.match(err.description, /not for http:\/\/127\.0\.0\.1:8080\/api\/v1\/mcp/);
    assert.equal(
      err.wwwAuthenticate,
      `Bearer error="invalid_token", error_description="${err.description}", resource_metadata="${PRM_URL}", scope="tools:call"`,
    );
    const user = await makeUser(t.app);
    const session = await t.app.services.identity.sessions.start(user.id);
    for (const token of [session.accessToken, 'not-a-token', `${rest}x`]) {
      const e = await refusal(mcp().verifyToken(token));
      assert.equal(e.error, 'invalid_token');
      assert.equal(e.status, 401);
    }
  });

  test('an MCP token without tools:call is insufficient_scope (403) with the scope to ask for', async () => {
    const setup = await mcpSetup(t);
    const tokens = await mcpTokens(t, setup, { query: { scope: 'email:read' } });
    const err = await refusal(mcp().verifyToken(tokens.access_token));
    assert.equal(err.error, 'insufficient_scope');
    assert.equal(err.status, 403);
    assert.match(err.wwwAuthenticate, /^Bearer error="insufficient_scope", /);
    assert.match(err.wwwAuthenticate, /scope="tools:call"/);
    assert.match(err.wwwAuthenticate, new RegExp(`resource_metadata="${PRM_URL}"`));
  });

  test('authenticate(header): none is a bare 401 challenge, malformed is 400, a good one the caller', async () => {
    const missing = await refusal(mcp().authenticate(undefined));
    assert.equal(missing.status, 401);
    assert.equal(missing.error, null);
    assert.equal(missing.wwwAuthenticate, `Bearer resource_metadata="${PRM_URL}", scope="tools:call"`);
    assert.equal(mcp().challenge(), missing.wwwAuthenticate);
    for (const header of ['Basic abc', 'Bearer', 'Bearer a b']) {
      const bad = await refusal(mcp().authenticate(header));
      assert.equal(bad.status, 400, header);
      assert.equal(bad.error, 'invalid_request', header);
    }
    const setup = await mcpSetup(t);
    const tokens = await mcpTokens(t, setup);
    assert.equal((await mcp().authenticate(`Bearer ${tokens.access_token}`)).workspaceId, setup.defaultWorkspace);
    assert.equal(mcp().resource, MCP_RESOURCE);
    assert.equal(mcp().metadataUrl, PRM_URL);
  });
});

describe('revocation ends MCP access at once', () => {
  test('DELETE /oauth/grants/:clientId: the verifier refuses the next call, refresh is invalid_grant', async () => {
    const setup = await mcpSetup(t);
    const tokens = await mcpTokens(t, setup);
    assert.equal((await mcp().verifyToken(tokens.access_token)).userId, setup.user.id);
    const session = await t.app.services.identity.sessions.start(setup.user.id);
    const grants = await t.inject({ url: '/api/v1/oauth/grants', headers: bearer(session.accessToken) });
    assert.deepEqual(
      JSON.parse(grants.payload).data.map((g: { clientId: string; scopes: string[] }) => [g.clientId, g.scopes]),
      [[setup.client.clientId, ['tools:call']]],
    );
    const del = await t.inject({
      method: 'DELETE',
      url: `/api/v1/oauth/grants/${setup.client.clientId}`,
      headers: bearer(session.accessToken),
    });
    assert.equal(del.statusCode, 200);
    assert.equal(JSON.parse(del.payload).data.revoked, true);
    const err = await refusal(mcp().verifyToken(tokens.access_token));
    assert.equal(err.error, 'invalid_token');
    assert.equal(err.status, 401);
    const refresh = await postToken(
      t,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(setup.client.clientId, setup.client.clientSecret!),
    );
    assert.equal(refresh.json().error, 'invalid_grant');
  });

  test('RFC 7009 revoke of an MCP access token by its client', async () => {
    const setup = await mcpSetup(t);
    const tokens = await mcpTokens(t, setup);
    await mcp().verifyToken(tokens.access_token);
    const revoke = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/revoke',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(setup.client.clientId, setup.client.clientSecret!),
      },
      payload: new URLSearchParams({ token: tokens.access_token }).toString(),
    });
    assert.equal(revoke.statusCode, 200);
    assert.equal((await refusal(mcp().verifyToken(tokens.access_token))).error, 'invalid_token');
  });
});

describe('protected resource metadata (RFC 9728)', () => {
  const expected = {
    resource: MCP_RESOURCE,
    authorization_servers: ['http://127.0.0.1:8080'],
    scopes_supported: ['tools:call'],
    bearer_methods_supported: ['header'],
    resource_name: 'Gantry MCP',
  };
  const paths = ['/.well-known/oauth-protected-resource/api/v1/mcp', '/.well-known/oauth-protected-resource'];

  test('the same document at the path-inserted and the root well-known URI, readable from any origin', async () => {
    for (const url of paths) {
      const res = await t.inject({
        url,
        headers: { origin: 'https://app.example', 'mcp-protocol-version': '2025-11-25' },
      });
      assert.equal(res.statusCode, 200, url);
      assert.deepEqual(JSON.parse(res.payload), expected);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.equal(res.headers['cache-control'], 'public, max-age=3600');
    }
    const doc = JSON.parse((await t.inject(paths[0])).payload);
    assert.equal(doc.scopes_supported.includes('offline_access'), false);
    const issuer = JSON.parse((await t.inject('/.well-known/oauth-authorization-server')).payload).issuer;
    assert.deepEqual(doc.authorization_servers, [issuer]);
  });

  test('the CORS preflight allows GET with the MCP-Protocol-Version header', async () => {
    for (const url of paths) {
      const res = await t.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'mcp-protocol-version',
        },
      });
      assert.equal(res.statusCode, 204, url);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.match(String(res.headers['access-control-allow-methods']), /\bGET\b/);
      assert.match(String(res.headers['access-control-allow-headers']), /MCP-Protocol-Version/i);
    }
  });

  test('the authorization server metadata answers the same preflight: MCP SDKs send the header there too', async () => {
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await t.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'mcp-protocol-version',
        },
      });
      assert.equal(res.statusCode, 204, url);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.match(String(res.headers['access-control-allow-methods']), /\bGET\b/);
      assert.match(String(res.headers['access-control-allow-headers']), /MCP-Protocol-Version/i);
      const doc = await t.inject({
        url,
        headers: { origin: 'https://app.example', 'mcp-protocol-version': '2025-11-25' },
      });
      assert.equal(doc.statusCode, 200, url);
      assert.equal(doc.headers['access-control-allow-origin'], '*');
      assert.equal(doc.headers['cache-control'], 'public, max-age=3600');
    }
  });

  test('no other method', async () => {
    const res = await t.inject({ method: 'POST', url: paths[0] });
    assert.ok([404, 405].includes(res.statusCode), String(res.statusCode));
  });
});
