import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeUser } from '../helpers/factories.js';
import { lastAudit } from '../helpers/accounts.js';
import { basic, makeClient } from '../helpers/oauth.js';
import { MCP_RESOURCE, postToken } from '../helpers/mcp-oauth.js';
import { addMember } from '../helpers/tenancy.js';
import { startFakeIdp, type FakeIdp } from '../helpers/fake-idp.js';
import { OPERATOR } from '../../src/accounts/access.js';

/**
 * The workspace of an ID-JAG's token (docs/identity-providers.md, ID-JAG): the one the operator
 * named with `idp add --workspace` when set, else the user's default workspace in the IdP's
 * account. Two IdPs on one account, one with the rule and one without.
 */
const ISSUER = 'http://127.0.0.1:8080';
const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

let t: TestApp;
let ruled: FakeIdp;
let plain: FakeIdp;
let accountId: string;
let defaultWorkspace: string;
let agentsWorkspace: string;
let client: Awaited<ReturnType<typeof makeClient>>;
let ruledId: string;
let plainId: string;

before(async () => {
  t = await createTestApp({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
  [ruled, plain] = await Promise.all([
    startFakeIdp({ clientId: 'ruled', clientSecret: 'ruled-secret' }),
    startFakeIdp({ clientId: 'plain', clientSecret: 'plain-secret' }),
  ]);
  const owner = await makeUser(t.app);
  const account = await makeAccount(t.app, owner.id);
  accountId = account.id;
  defaultWorkspace = account.defaultWorkspaceId;
  agentsWorkspace = (await t.app.services.accounts.workspaces.create(OPERATOR, accountId, 'Agents')).id;
  const add = (idp: FakeIdp, name: string, clientId: string, secret: string, workspaceId: string | null) =>
    t.app.services.idp.add({ name, issuer: idp.issuer, clientId, clientSecret: secret, accountId, workspaceId });
  ruledId = (await add(ruled, 'Ruled', 'ruled', 'ruled-secret', agentsWorkspace)).id;
  plainId = (await add(plain, 'Plain', 'plain', 'plain-secret', null)).id;
  client = await makeClient(t, { scopes: ['tools:call'] });
});
after(async () => {
  await t.close();
  await Promise.all([ruled.close(), plain.close()]);
});

/** A member of the account linked at both IdPs as `sub`; in the Agents workspace when `inAgents`. */
async function memberLinked(sub: string, inAgents: boolean) {
  const user = await makeUser(t.app);
  await addMember(t.app, accountId, user.id, 'member');
  if (inAgents)
    await t.app.services.accounts.workspaces.addMember(OPERATOR, accountId, agentsWorkspace, {
      chainerId: user.id,
      role: 'member',
    });
  await t.app.services.idp.link(ruledId, sub, user.id);
  await t.app.services.idp.link(plainId, sub, user.id);
  return user;
}

const exchange = async (idp: FakeIdp, sub: string) =>
  postToken(
    t,
    {
      grant_type: GRANT,
      assertion: await idp.idJag({ sub, aud: ISSUER, clientId: client.clientId, resource: MCP_RESOURCE }),
    },
    basic(client.clientId, client.clientSecret!),
  );

describe("the ID-JAG token's workspace", () => {
  test('the operator named a workspace: the token is bound to it', async () => {
    const user = await memberLinked('in-agents', true);
    const res = await exchange(ruled, 'in-agents');
    assert.equal(res.statusCode, 200, res.payload);
    const claims = decodeJwt(res.json().access_token);
    assert.equal(claims.sub, user.id);
    assert.equal(claims.workspace_id, agentsWorkspace);
    const entry = await lastAudit(t.app, accountId, 'idp.assertion_exchanged');
    assert.equal(entry.metadata.workspaceId, agentsWorkspace);
  });

  test('no rule: the same user gets their default workspace in the IdP account', async () => {
    await memberLinked('both-ways', true);
    const res = await exchange(plain, 'both-ways');
    assert.equal(res.statusCode, 200, res.payload);
    assert.equal(decodeJwt(res.json().access_token).workspace_id, defaultWorkspace);
  });

  test('a user who may not use the named workspace is refused, not sent to another one', async () => {
    await memberLinked('not-in-agents', false);
    const res = await exchange(ruled, 'not-in-agents');
    assert.equal(res.statusCode, 400, res.payload);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /may not use the workspace the identity provider's rule names/);
    const entry = await lastAudit(t.app, accountId, 'idp.assertion_refused');
    assert.equal(entry.metadata.idpId, ruledId);
    // Without the rule, the same user is served their default workspace.
    assert.equal((await exchange(plain, 'not-in-agents')).statusCode, 200);
  });

  test('the named workspace deleted: refused', async () => {
    await memberLinked('after-delete', true);
    await t.app.services.accounts.workspaces.remove(OPERATOR, accountId, agentsWorkspace);
    const res = await exchange(ruled, 'after-delete');
    assert.equal(res.statusCode, 400, res.payload);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /or it is gone/);
  });
});
