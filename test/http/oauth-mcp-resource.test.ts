import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import {
  API_RESOURCE,
  MCP_RESOURCE,
  mcpAuthorizeUrl,
  mcpCode,
  mcpSetup,
  mcpTokens,
  postToken,
} from '../helpers/mcp-oauth.js';
import { authorizeAndAllow, authorizeQuery, basic, makeClient, pkcePair, REDIRECT } from '../helpers/oauth.js';

// RFC 8707 resource indicators at authorize, token and refresh (docs/oauth.md, Resource indicators).
let t: TestApp;
before(async () => {
  t = await createTestApp({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

function assertInvalidTarget(res: { statusCode: number; headers: Record<string, unknown>; payload: string }) {
  assert.equal(res.statusCode, 400, res.payload);
  assert.equal(res.headers['cache-control'], 'no-store');
  const body = JSON.parse(res.payload);
  assert.equal(body.error, 'invalid_target');
  assert.equal(typeof body.error_description, 'string');
  return body as { error: string; error_description: string };
}

/** A REST API token (no resource) for a client of its own. */
async function restTokens(scope = 'email:read') {
  const client = await makeClient(t, { scopes: ['email:read', 'wallet:read', 'tools:call'] });
  const user = await makeUser(t.app);
  const { verifier, challenge } = pkcePair();
  const { location } = await authorizeAndAllow(
    t,
    authorizeQuery(client.clientId, challenge, { scope }),
    user.email,
    user.password,
  );
  return { client, user, code: location.searchParams.get('code')!, verifier };
}

describe('authorize: resource', () => {
  test('an unknown, relative, fragment, trailing-slash or repeated resource redirects with invalid_target', async () => {
    const { client } = await mcpSetup(t);
    for (const resource of [
      'https://elsewhere.example/api/v1/mcp',
      'http://127.0.0.1:8080/api/v1/mcp/',
      'http://127.0.0.1:8080/api/v2',
      'http://127.0.0.1:8080',
      '/api/v1/mcp',
      'not a uri',
      `${MCP_RESOURCE}#frag`,
    ]) {
      const res = await t.inject(mcpAuthorizeUrl(client.clientId, pkcePair().challenge, { resource }));
      assert.equal(res.statusCode, 302, resource);
      const location = new URL(res.headers.location as string);
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT, resource);
      assert.equal(location.searchParams.get('error'), 'invalid_target', resource);
      assert.ok(location.searchParams.get('error_description'), resource);
      assert.equal(location.searchParams.get('state'), 'st-123', resource);
      assert.equal(location.searchParams.get('iss'), 'http://127.0.0.1:8080', resource);
    }
    const repeated = await t.inject(
      `${mcpAuthorizeUrl(client.clientId, pkcePair().challenge)}&resource=${encodeURIComponent(API_RESOURCE)}`,
    );
    assert.equal(new URL(repeated.headers.location as string).searchParams.get('error'), 'invalid_target');
  });

  test('an unknown client is still a page, never a redirect, whatever the resource', async () => {
    const res = await t.inject(
      mcpAuthorizeUrl('7b0c1f7e-4c4b-4e0f-9a53-2f3b3f1b0c11', pkcePair().challenge, {
        resource: 'https://evil.example/',
      }),
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
    assert.match(res.payload, /not registered/);
  });

  test('both resources are accepted, the URL compared after normalisation', async () => {
    const { client } = await mcpSetup(t);
    for (const resource of [MCP_RESOURCE, API_RESOURCE, 'HTTP://127.0.0.1:8080/api/v1/mcp']) {
      const res = await t.inject(mcpAuthorizeUrl(client.clientId, pkcePair().challenge, { resource }));
      assert.equal(res.statusCode, 200, resource);
      assert.match(res.payload, /name="password"/, resource);
    }
  });
});

describe('token: the code carries its resource', () => {
  test('an MCP code gives an access token whose aud is the MCP endpoint, with or without resource', async () => {
    const setup = await mcpSetup(t);
    for (const tokenResource of [undefined, MCP_RESOURCE]) {
      const tokens = await mcpTokens(t, setup, { tokenResource });
      const claims = decodeJwt(tokens.access_token);
      assert.equal(claims.aud, MCP_RESOURCE);
      assert.equal(claims.scope, 'tools:call');
      assert.equal(claims.workspace_id, setup.defaultWorkspace);
      assert.equal(claims.sub, setup.user.id);
      assert.equal(tokens.scope, 'tools:call');
    }
  });

  test('a resource other than the code one is invalid_target, and the code is spent', async () => {
    const setup = await mcpSetup(t);
    const auth = basic(setup.client.clientId, setup.client.clientSecret!);
    const { code, verifier } = await mcpCode(t, setup);
    const exchange = (resource?: string) =>
      postToken(
        t,
        {
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          ...(resource ? { resource } : {}),
        },
        auth,
      );
    const body = assertInvalidTarget(await exchange(API_RESOURCE));
    assert.match(body.error_description, /resource/);
    const again = await exchange(MCP_RESOURCE);
    assert.equal(again.statusCode, 400);
    assert.equal(again.json().error, 'invalid_grant');
  });

  test('a REST API code refuses the MCP resource; it accepts its own, explicitly', async () => {
    const a = await restTokens();
    const auth = basic(a.client.clientId, a.client.clientSecret!);
    assertInvalidTarget(
      await postToken(
        t,
        {
          grant_type: 'authorization_code',
          code: a.code,
          redirect_uri: REDIRECT,
          code_verifier: a.verifier,
          resource: MCP_RESOURCE,
        },
        auth,
      ),
    );
    const b = await restTokens();
    const ok = await postToken(
      t,
      {
        grant_type: 'authorization_code',
        code: b.code,
        redirect_uri: REDIRECT,
        code_verifier: b.verifier,
        resource: API_RESOURCE,
      },
      basic(b.client.clientId, b.client.clientSecret!),
    );
    assert.equal(ok.statusCode, 200, ok.payload);
    const claims = decodeJwt(ok.json().access_token);
    assert.equal(claims.aud, API_RESOURCE);
    assert.equal(claims.workspace_id, undefined);
  });

  test('unknown, fragment and repeated resources are invalid_target before the code is looked at', async () => {
    const setup = await mcpSetup(t);
    const auth = basic(setup.client.clientId, setup.client.clientSecret!);
    const { code, verifier } = await mcpCode(t, setup);
    const base = `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT)}&code_verifier=${verifier}`;
    for (const extra of [
      `resource=${encodeURIComponent('https://evil.example/api/v1/mcp')}`,
      `resource=${encodeURIComponent(`${MCP_RESOURCE}#x`)}`,
      'resource=relative/path',
      `resource=${encodeURIComponent(MCP_RESOURCE)}&resource=${encodeURIComponent(API_RESOURCE)}`,
    ]) {
      const res = await t.inject({
        method: 'POST',
        url: '/api/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        payload: `${base}&${extra}`,
      });
      assertInvalidTarget(res);
    }
    // Not consumed by those refusals.
    const ok = await postToken(
      t,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      auth,
    );
    assert.equal(ok.statusCode, 200, ok.payload);
  });
});

describe('refresh: the grant keeps its resource', () => {
  test('a refreshed MCP token keeps the aud and the workspace; another resource is invalid_target and spends nothing', async () => {
    const setup = await mcpSetup(t);
    const auth = basic(setup.client.clientId, setup.client.clientSecret!);
    const first = await mcpTokens(t, setup);
    const refused = await postToken(
      t,
      { grant_type: 'refresh_token', refresh_token: first.refresh_token, resource: API_RESOURCE },
      auth,
    );
    assertInvalidTarget(refused);
    assertInvalidTarget(
      await postToken(
        t,
        { grant_type: 'refresh_token', refresh_token: first.refresh_token, resource: 'https://evil.example/' },
        auth,
      ),
    );
    // The refused requests left the token usable; the grant's resource holds with or without the parameter.
    let refreshToken = first.refresh_token;
    for (const resource of [undefined, MCP_RESOURCE]) {
      const res = await postToken(
        t,
        { grant_type: 'refresh_token', refresh_token: refreshToken, ...(resource ? { resource } : {}) },
        auth,
      );
      assert.equal(res.statusCode, 200, res.payload);
      const claims = decodeJwt(res.json().access_token);
      assert.equal(claims.aud, MCP_RESOURCE);
      assert.equal(claims.workspace_id, setup.defaultWorkspace);
      refreshToken = res.json().refresh_token;
    }
  });

  test('a REST API grant refuses the MCP resource at refresh', async () => {
    const a = await restTokens();
    const auth = basic(a.client.clientId, a.client.clientSecret!);
    const tokens = (
      await postToken(
        t,
        { grant_type: 'authorization_code', code: a.code, redirect_uri: REDIRECT, code_verifier: a.verifier },
        auth,
      )
    ).json();
    assertInvalidTarget(
      await postToken(
        t,
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, resource: MCP_RESOURCE },
        auth,
      ),
    );
    const ok = await postToken(
      t,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, resource: API_RESOURCE },
      auth,
    );
    assert.equal(ok.statusCode, 200, ok.payload);
    assert.equal(decodeJwt(ok.json().access_token).aud, API_RESOURCE);
  });
});
