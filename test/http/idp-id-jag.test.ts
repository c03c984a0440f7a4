import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeUser } from '../helpers/factories.js';
import { auditOf, lastAudit } from '../helpers/accounts.js';
import { basic, makeClient } from '../helpers/oauth.js';
import { MCP_RESOURCE, postToken } from '../helpers/mcp-oauth.js';
import { statelessRpc } from '../helpers/mcp-gateway.js';
import { addMember } from '../helpers/tenancy.js';
import { startFakeIdp, type FakeIdp } from '../helpers/fake-idp.js';
import { ManualClock } from '../../src/lib/clock.js';

const ISSUER = 'http://127.0.0.1:8080';
const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

let t: TestApp;
let clock: ManualClock;
let idp: FakeIdp;
let idpId: string;
let accountId: string;
let workspaceId: string;
let user: Awaited<ReturnType<typeof makeUser>>;
let client: Awaited<ReturnType<typeof makeClient>>;
const sub = 'idp-subject-1';

before(async () => {
  clock = new ManualClock(new Date());
  t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
  idp = await startFakeIdp({ clientId: 'gantry-at-idp', clientSecret: 'idp-secret' });
  const owner = await makeUser(t.app);
  const account = await makeAccount(t.app, owner.id);
  accountId = account.id;
  workspaceId = account.defaultWorkspaceId;
  user = await makeUser(t.app);
  await addMember(t.app, accountId, user.id, 'member');
  const added = await t.app.services.idp.add({
    name: 'Acme IdP',
    issuer: idp.issuer,
    clientId: 'gantry-at-idp',
    clientSecret: 'idp-secret',
    domains: ['acme.test'],
    accountId,
  });
  idpId = added.id;
  await t.app.services.idp.link(idpId, sub, user.id);
  client = await makeClient(t, { scopes: ['email:read', 'tools:call'] });
});
after(async () => {
  await t.close();
  await idp.close();
});

const jag = (claims: Record<string, unknown> = {}, opts: Parameters<FakeIdp['idJag']>[2] = {}) =>
  idp.idJag({ sub, aud: ISSUER, clientId: client.clientId, resource: MCP_RESOURCE }, claims, opts);
const exchange = (
  assertion: string,
  extra: Record<string, string> = {},
  auth = basic(client.clientId, client.clientSecret!),
) => postToken(t, { grant_type: GRANT, assertion, ...extra }, auth);

async function refused(assertion: string, pattern: RegExp, extra: Record<string, string> = {}) {
  const res = await exchange(assertion, extra);
  assert.equal(res.statusCode, 400, res.payload);
  assert.equal(res.json().error, 'invalid_grant');
  assert.match(res.json().error_description, pattern);
  return res;
}

describe('ID-JAG at the token endpoint', () => {
  test('discovery lists the JWT bearer grant and the ID-JAG profile', async () => {
    const res = await t.inject('/.well-known/oauth-authorization-server');
    const doc = JSON.parse(res.payload);
    assert.ok(doc.grant_types_supported.includes(GRANT));
    assert.deepEqual(doc.authorization_grant_profiles_supported, ['urn:ietf:params:oauth:grant-profile:id-jag']);
  });

  test('an ID-JAG becomes an MCP token for the default workspace of the IdP account, no refresh token; tools/list works', async () => {
    const res = await exchange(await jag({ scope: 'tools:call' }));
    assert.equal(res.statusCode, 200, res.payload);
    const body = res.json();
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.scope, 'tools:call');
    assert.equal(body.refresh_token, undefined);
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.aud, MCP_RESOURCE);
    assert.equal(claims.sub, user.id);
    assert.equal(claims.client_id, client.clientId);
    assert.equal(claims.workspace_id, workspaceId);
    // No refresh token, not even stored: a new token takes a new ID-JAG (the IdP's policy again).
    const refreshRows = await t.app.kernel.db
      .selectFrom('oauth_refresh_tokens')
      .select('grant_id')
      .where('grant_id', '=', claims.gid as string)
      .execute();
    assert.deepEqual(refreshRows, []);
    const list = await statelessRpc(t, body.access_token, 'tools/list', {});
    assert.equal(list.statusCode, 200, list.payload);
    assert.ok(Array.isArray(JSON.parse(list.payload).result.tools));
    const entry = await lastAudit(t.app, accountId, 'idp.assertion_exchanged');
    assert.equal(entry.actorId, user.id);
    assert.equal(entry.targetId, claims.gid);
    assert.equal(entry.metadata.idpId, idpId);
    assert.equal(entry.metadata.subject, sub);
    // The assertion is a credential: never logged (the MCP extension, 7.4.2).
    assert.ok(!t.logs.some((line) => line.includes(body.access_token)));
  });

  test('RS256 keys of the JWKS are accepted too', async () => {
    const res = await exchange(await jag({}, { alg: 'RS256' }));
    assert.equal(res.statusCode, 200, res.payload);
  });

  test('an issuer that is no configured IdP is refused', async () => {
    await refused(await jag({ iss: 'https://elsewhere.example' }), /not from a configured identity provider/);
  });

  test('a signature by a key outside the JWKS is refused', async () => {
    await refused(await jag({}, { unpublished: true }), /No key of the identity provider's JWKS/);
  });

  test('a tampered payload fails the signature', async () => {
    const [h, p, s] = (await jag()).split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.sub = 'someone-else';
    await refused(`${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`, /signature is invalid/);
  });

  test('typ must be oauth-id-jag+jwt', async () => {
    await refused(await jag({}, { typ: 'JWT' }), /typ must be oauth-id-jag\+jwt/);
  });

  test('aud must be this server issuer', async () => {
    await refused(await jag({ aud: 'https://other-as.example' }), /aud must be this server's issuer/);
  });

  test('client_id must be the authenticated client', async () => {
    const other = await makeClient(t, { scopes: ['tools:call'] });
    await refused(await jag({ client_id: other.clientId }), /another client/);
  });

  test('resource must be the MCP resource, and present', async () => {
    await refused(await jag({ resource: `${ISSUER}/api/v1` }), /resource must be/);
    await refused(await jag({ resource: undefined }), /resource must be/);
  });

  test('exp: required, not past, at most five minutes ahead', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(await jag({ exp: undefined }), /exp/);
    await refused(await jag({ exp: now - 120, iat: now - 400 }), /expired/);
    await refused(await jag({ exp: now + 3600 }), /expire within 300 seconds/);
  });

  test('iat: required, not in the future', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(await jag({ iat: undefined }), /iat/);
    await refused(await jag({ iat: now + 600 }), /iat|future/);
  });

  test('jti: required and single use', async () => {
    await refused(await jag({ jti: undefined }), /jti/);
    const once = await jag();
    assert.equal((await exchange(once)).statusCode, 200);
    await refused(once, /already used/);
    const stored = await t.app.kernel.db.selectFrom('idp_used_assertions').selectAll().execute();
    assert.ok(stored.length >= 1);
  });

  test('a subject linked to no user is refused, and the refusal audited in the IdP account', async () => {
    await refused(await jag({ sub: 'nobody-here' }), /not linked to a user/);
    const entry = await lastAudit(t.app, accountId, 'idp.assertion_refused');
    assert.equal(entry.actorId, 'system');
    assert.equal(entry.metadata.idpId, idpId);
    assert.match(entry.metadata.reason, /not linked/);
  });

  test('a linked user who is no member of the IdP account is refused', async () => {
    const stranger = await makeUser(t.app);
    await t.app.services.idp.link(idpId, 'stranger-sub', stranger.id);
    await refused(await jag({ sub: 'stranger-sub' }), /not an active member/);
  });

  test('a public client, or a wrong secret, is invalid_client', async () => {
    const pub = await makeClient(t, { type: 'public', scopes: ['tools:call'] });
    const asPublic = await postToken(t, { grant_type: GRANT, assertion: await jag(), client_id: pub.clientId });
    assert.equal(asPublic.statusCode, 401);
    assert.equal(asPublic.json().error, 'invalid_client');
    const wrong = await exchange(await jag(), {}, basic(client.clientId, 'not-the-secret'));
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json().error, 'invalid_client');
  });

  test('scopes are the intersection of asked, allowed by the IdP and by the client', async () => {
    const asked = await exchange(await jag(), { scope: 'email:read' });
    assert.equal(asked.statusCode, 400);
    assert.equal(asked.json().error, 'invalid_scope');
    const narrowIdp = await exchange(await jag({ scope: 'calendar.read' }));
    assert.equal(narrowIdp.json().error, 'invalid_scope');
    const wide = await exchange(await jag({ scope: 'tools:call calendar.read' }), { scope: 'tools:call email:read' });
    assert.equal(wide.statusCode, 200, wide.payload);
    assert.equal(wide.json().scope, 'tools:call');
    const noTools = await makeClient(t, { scopes: ['email:read'] });
    const res = await postToken(
      t,
      {
        grant_type: GRANT,
        assertion: await idp.idJag({ sub, aud: ISSUER, clientId: noTools.clientId, resource: MCP_RESOURCE }),
      },
      basic(noTools.clientId, noTools.clientSecret!),
    );
    assert.equal(res.json().error, 'invalid_scope');
  });

  test('a resource parameter naming the REST API is invalid_target; no assertion is invalid_request', async () => {
    const res = await exchange(await jag(), { resource: `${ISSUER}/api/v1` });
    assert.equal(res.json().error, 'invalid_target');
    const none = await postToken(t, { grant_type: GRANT }, basic(client.clientId, client.clientSecret!));
    assert.equal(none.json().error, 'invalid_request');
  });

  test('a rotated key is picked up: the JWKS is fetched again once the cooldown is over', async () => {
    assert.equal((await exchange(await jag())).statusCode, 200);
    const fetches = idp.jwksFetches;
    await idp.rotate();
    // Within 30 s of the last fetch an unknown kid does not fetch again (no request storm).
    clock.advance(1_000);
    const early = await jag();
    const first = await exchange(early);
    assert.equal(first.statusCode, 400);
    assert.match(first.json().error_description, /No key/);
    assert.equal(idp.jwksFetches, fetches);
    clock.advance(31_000);
    const later = await exchange(await jag());
    assert.equal(later.statusCode, 200, later.payload);
    assert.ok(idp.jwksFetches > fetches, 'the key set was fetched again');
  });

  test('the purge job drops spent jtis once expired', async () => {
    const before = await t.app.kernel.db.selectFrom('idp_used_assertions').selectAll().execute();
    assert.ok(before.length > 0);
    await t.app.services.idp.purgeUsedAssertions(new Date(Date.now() + 3600_000));
    const left = await t.app.kernel.db.selectFrom('idp_used_assertions').selectAll().execute();
    assert.equal(left.length, 0);
  });

  test('removing the IdP revokes its grants at once; its ID-JAGs are refused after', async () => {
    const res = await exchange(await jag());
    const token = res.json().access_token;
    assert.equal((await statelessRpc(t, token, 'tools/list', {})).statusCode, 200);
    const removed = await t.app.services.idp.remove(idpId);
    assert.ok(removed.revokedGrants >= 2);
    assert.ok(removed.unlinkedUsers >= 1);
    assert.equal((await statelessRpc(t, token, 'tools/list', {})).statusCode, 401);
    await refused(await jag(), /not from a configured identity provider/);
    assert.ok((await auditOf(t.app, accountId)).length > 0);
  });
});
