import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeUser } from '../helpers/factories.js';
import {
  MCP_RESOURCE,
  mcpAuthorizeUrl,
  mcpSetup,
  mcpTokens,
  openConsent,
  submitConsent,
} from '../helpers/mcp-oauth.js';
import { authorizeQuery, pkcePair } from '../helpers/oauth.js';
import { asUser } from '../helpers/accounts.js';

// Consent for the MCP resource or scope: the workspace to expose (docs/oauth.md, Workspace binding).
let t: TestApp;
before(async () => {
  t = await createTestApp({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

/** The options of the workspace_id select, in order, with the selected one. */
function workspaceSelect(html: string) {
  const select = /<select id="workspace_id" name="workspace_id" required>([\s\S]*?)<\/select>/.exec(html);
  assert.ok(select, 'the consent page has a workspace_id select');
  const options = [...select[1].matchAll(/<option value="([^"]+)"( selected)?>([^<]*)<\/option>/g)].map((m) => ({
    id: m[1],
    selected: m[2] !== undefined,
    name: m[3],
  }));
  return { options, selected: options.filter((o) => o.selected).map((o) => o.id) };
}

async function grantsOf(userId: string) {
  return t.app.kernel.db
    .selectFrom('oauth_grants')
    .select(['id', 'resource', 'workspace_id'])
    .where('user_id', '=', userId)
    .execute();
}

describe('the consent page of an MCP request', () => {
  test('asks for the workspace, the default preselected, among the workspaces the user sees', async () => {
    const setup = await mcpSetup(t, { name: 'Claude Code' });
    const second = await t.app.services.accounts.workspaces.create(asUser(setup.user.id), setup.account.id, 'Research');
    const { page } = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge), setup.user);
    assert.equal(page.statusCode, 200);
    assert.match(page.payload, /Claude Code wants to access your Gantry account/);
    assert.match(page.payload, /List and call the tools of one workspace you choose/);
    assert.match(page.payload, /\(tools:call\)/);
    const { options, selected } = workspaceSelect(page.payload);
    assert.deepEqual(
      options.map((o) => o.id),
      [setup.defaultWorkspace, second.id],
    );
    assert.equal(options[1].name, 'Research');
    assert.deepEqual(selected, [setup.defaultWorkspace]);
    assert.equal(page.headers['x-frame-options'], 'DENY');
  });

  test('the MCP scope alone (no resource) also binds a workspace; a REST request shows no select', async () => {
    const setup = await mcpSetup(t);
    const scoped = await openConsent(
      t,
      mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge, { resource: undefined }),
      setup.user,
    );
    assert.deepEqual(workspaceSelect(scoped.page.payload).selected, [setup.defaultWorkspace]);
    const rest = await openConsent(
      t,
      authorizeQuery(setup.client.clientId, pkcePair().challenge, { scope: 'email:read' }),
      setup.user,
    );
    assert.equal(rest.page.statusCode, 200);
    assert.doesNotMatch(rest.page.payload, /workspace_id/);
  });

  test('the chosen workspace is bound to the grant and the token', async () => {
    const setup = await mcpSetup(t);
    const research = await t.app.services.accounts.workspaces.create(
      asUser(setup.user.id),
      setup.account.id,
      'Research',
    );
    const tokens = await mcpTokens(t, setup, { workspaceId: research.id });
    assert.equal(decodeJwt(tokens.access_token).workspace_id, research.id);
    assert.deepEqual(
      (await grantsOf(setup.user.id)).map((g) => ({ resource: g.resource, workspace_id: g.workspace_id })),
      [{ resource: 'mcp', workspace_id: research.id }],
    );
  });

  test("another account's workspace, a malformed one or none at all is a 400 page, and nothing is issued", async () => {
    const setup = await mcpSetup(t);
    const stranger = await makeUser(t.app);
    const foreign = await makeAccount(t.app, stranger.id);
    for (const workspaceId of [
      foreign.defaultWorkspaceId,
      'not-a-uuid',
      '7b0c1f7e-4c4b-4e0f-9a53-2f3b3f1b0c11',
      null,
    ]) {
      const consent = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge), setup.user);
      const res = await submitConsent(t, consent, {
        decision: 'allow',
        ...(workspaceId === null ? {} : { workspace_id: workspaceId }),
      });
      assert.equal(res.statusCode, 400, String(workspaceId));
      assert.equal(res.headers.location, undefined);
      assert.match(String(res.headers['content-type']), /text\/html/);
      assert.match(res.payload, /Choose one of your workspaces/);
    }
    assert.deepEqual(await grantsOf(setup.user.id), []);
  });

  test('deny needs no workspace', async () => {
    const setup = await mcpSetup(t);
    const consent = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge), setup.user);
    const res = await submitConsent(t, consent, { decision: 'deny' });
    assert.equal(res.statusCode, 303);
    assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'access_denied');
  });

  test('a remembered consent does not skip the workspace choice, even for a confidential client', async () => {
    const setup = await mcpSetup(t);
    await mcpTokens(t, setup);
    const again = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge), setup.user);
    assert.equal(again.page.statusCode, 200);
    assert.deepEqual(workspaceSelect(again.page.payload).selected, [setup.defaultWorkspace]);
  });

  test('a user in no account is told so (403 page): nothing to allow, the way back to the application', async () => {
    const setup = await mcpSetup(t);
    const loner = await makeUser(t.app);
    const consent = await openConsent(t, mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge), loner);
    const { page } = consent;
    assert.equal(page.statusCode, 403);
    assert.match(page.payload, /No workspace to share/);
    assert.match(page.payload, /Ask the owner of an account to invite you/);
    assert.doesNotMatch(page.payload, /value="allow"/);
    assert.match(page.payload, /<button class="btn btn-primary" type="submit" name="decision" value="deny">Back to /);
    // The button answers the client: access_denied at its redirect URI, and no grant.
    const back = await submitConsent(t, consent, { decision: 'deny' });
    assert.equal(back.statusCode, 303);
    assert.equal(new URL(String(back.headers.location)).searchParams.get('error'), 'access_denied');
    assert.deepEqual(await grantsOf(loner.id), []);
  });

  test('deleting the workspace deletes the grant: its refresh token stops', async () => {
    const setup = await mcpSetup(t);
    const temp = await t.app.services.accounts.workspaces.create(asUser(setup.user.id), setup.account.id, 'Temp');
    const tokens = await mcpTokens(t, setup, { workspaceId: temp.id });
    await t.app.services.accounts.workspaces.remove(asUser(setup.user.id), setup.account.id, temp.id);
    assert.deepEqual(await grantsOf(setup.user.id), []);
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${setup.client.clientId}:${setup.client.clientSecret}`).toString('base64')}`,
      },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).toString(),
    });
    assert.equal(res.statusCode, 400);
    assert.equal(JSON.parse(res.payload).error, 'invalid_grant');
  });

  test('the sign-in continues the MCP request with its resource', async () => {
    const setup = await mcpSetup(t);
    const url = mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge);
    const page = await t.inject(url);
    const requestState = /name="request_state" value="([^"]*)"/.exec(page.payload)![1];
    const opened = t.app.services.oauth.authorize.openRequest(requestState.replace(/&amp;/g, '&'))!;
    assert.equal(opened.resource, 'mcp');
    const next = new URL(t.app.services.oauth.authorize.requestUrl(opened), 'http://x');
    assert.equal(next.searchParams.get('resource'), MCP_RESOURCE);
  });
});
