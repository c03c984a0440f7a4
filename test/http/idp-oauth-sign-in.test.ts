import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeUser } from '../helpers/factories.js';
import {
  AUTHORIZE,
  basic,
  cookieHeader,
  cookiesFrom,
  form,
  FORM_HEADERS,
  hiddenInput,
  makeClient,
  pkcePair,
  REDIRECT,
  signIn,
} from '../helpers/oauth.js';
import { MCP_RESOURCE, mcpAuthorizeUrl, postToken } from '../helpers/mcp-oauth.js';
import { statelessRpc } from '../helpers/mcp-gateway.js';
import { totpAt } from '../helpers/second-factors.js';
import { startFakeIdp, type FakeIdp, type FakeIdpUser } from '../helpers/fake-idp.js';
import { ManualClock } from '../../src/lib/clock.js';

/**
 * SSO from the sign-in page of /oauth/authorize (docs/identity-providers.md, Sign-in): the IdP
 * buttons, bound domains sent to their IdP, the request continued after the IdP; and the second
 * step of an SSO sign-in opening a session that `idp remove` ends (Removal).
 */
let t: TestApp;
let clock: ManualClock;
let idp: FakeIdp;
let idpId: string;
let accountId: string;
let workspaceId: string;
let client: Awaited<ReturnType<typeof makeClient>>;

before(async () => {
  // Near the real time: the fake IdP stamps its ID tokens with it, and openid-client checks them.
  clock = new ManualClock(new Date());
  t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '20' } });
  idp = await startFakeIdp({ clientId: 'gantry-sso', clientSecret: 'sso-secret' });
  const owner = await makeUser(t.app);
  const account = await makeAccount(t.app, owner.id);
  accountId = account.id;
  workspaceId = account.defaultWorkspaceId;
  idpId = (
    await t.app.services.idp.add({
      name: 'Acme',
      issuer: idp.issuer,
      clientId: 'gantry-sso',
      clientSecret: 'sso-secret',
      domains: ['acme.test'],
      accountId,
    })
  ).id;
  client = await makeClient(t, { scopes: ['email:read', 'tools:call'] });
});
after(async () => {
  await t.close();
  await idp.close();
});

const setCookies = (res: { headers: Record<string, unknown> }) =>
  cookiesFrom(res.headers['set-cookie'] as string[] | string | undefined);

/** Follows a "Continue with" link through the fake IdP (signing in `who`) to Gantry's callback. */
async function throughIdp(startUrl: string, who: FakeIdpUser, cookies: Record<string, string>) {
  idp.nextUser = who;
  const start = await t.inject({ url: startUrl, headers: { cookie: cookieHeader(cookies) } });
  assert.equal(start.statusCode, 302, start.payload);
  Object.assign(cookies, setCookies(start));
  const atIdp = await fetch(start.headers.location as string, { redirect: 'manual' });
  const back = new URL(atIdp.headers.get('location')!);
  const callback = await t.inject({
    url: `${back.pathname}${back.search}`,
    headers: { cookie: cookieHeader(cookies) },
  });
  Object.assign(cookies, setCookies(callback));
  return callback;
}

const ssoLink = (html: string) => /href="(\/auth\/sso\/start\?[^"]+)"[^>]*>Continue with Acme</.exec(html)?.[1];
const unescape = (href: string) => href.replace(/&amp;/g, '&');
/** The same authorize request: its path and parameters, in whatever order. */
function assertSameRequest(actual: unknown, expected: string) {
  const sorted = (u: string) => {
    const url = new URL(u, 'http://x');
    return `${url.pathname}?${[...url.searchParams]
      .sort()
      .map(([k, v]) => `${k}=${v}`)
      .join('&')}`;
  };
  assert.equal(sorted(String(actual)), sorted(expected));
}

describe('SSO on the sign-in page of /oauth/authorize', () => {
  test('the page offers "Continue with Acme", returning to the same authorize request', async () => {
    const url = mcpAuthorizeUrl(client.clientId, pkcePair().challenge, { state: 'st-1' });
    const page = await t.inject(url);
    assert.equal(page.statusCode, 200, page.payload);
    const href = ssoLink(page.payload);
    assert.ok(href, 'a Continue with Acme link');
    const params = new URL(unescape(href), 'http://x').searchParams;
    assert.equal(params.get('idp'), idpId);
    const returnTo = new URL(params.get('return_to')!, 'http://x');
    assert.equal(returnTo.pathname, AUTHORIZE);
    assert.equal(returnTo.searchParams.get('client_id'), client.clientId);
    assert.equal(returnTo.searchParams.get('state'), 'st-1');
    assert.equal(returnTo.searchParams.get('resource'), MCP_RESOURCE);
  });

  test('end to end: authorize, SSO (a new user just in time), callback, consent, code, token, tools/list', async () => {
    const { verifier, challenge } = pkcePair();
    const url = mcpAuthorizeUrl(client.clientId, challenge, { state: 'e2e' });
    const page = await t.inject(url);
    const cookies = setCookies(page);
    const callback = await throughIdp(
      unescape(ssoLink(page.payload)!),
      { sub: 'oauth-jit', email: 'agent.owner@acme.test', email_verified: true, amr: ['pwd'] },
      cookies,
    );
    assert.equal(callback.statusCode, 303, callback.payload);
    assertSameRequest(callback.headers.location, url);
    assert.ok(cookies.gantry_session, 'signed in');

    const consent = await t.inject({ url, headers: { cookie: cookieHeader(cookies) } });
    assert.equal(consent.statusCode, 200, consent.payload);
    assert.match(consent.payload, /Signed in as <strong>agent\.owner@acme\.test<\/strong>/);
    assert.match(consent.payload, /name="workspace_id"/);
    const allowed = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        csrf: hiddenInput(consent.payload, 'csrf')!,
        request_state: hiddenInput(consent.payload, 'request_state')!,
        decision: 'allow',
        workspace_id: workspaceId,
      }),
    });
    assert.equal(allowed.statusCode, 303, allowed.payload);
    const location = new URL(allowed.headers.location as string);
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    assert.equal(location.searchParams.get('state'), 'e2e');
    const token = await postToken(
      t,
      {
        grant_type: 'authorization_code',
        code: location.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      },
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(token.statusCode, 200, token.payload);
    const claims = decodeJwt(token.json().access_token);
    const user = await t.app.services.identity.findUserByEmail('agent.owner@acme.test');
    assert.equal(claims.sub, user!.id);
    assert.equal(claims.aud, MCP_RESOURCE);
    assert.equal(claims.workspace_id, workspaceId);
    const list = await statelessRpc(t, token.json().access_token, 'tools/list', {});
    assert.equal(list.statusCode, 200, list.payload);
  });

  test('an email on a bound domain posted to the form goes to its IdP, continuing this request', async () => {
    const url = mcpAuthorizeUrl(client.clientId, pkcePair().challenge);
    const { res } = await signIn(t, url, 'Someone@ACME.test', 'anything');
    assert.equal(res.statusCode, 303, res.payload);
    const to = new URL(res.headers.location as string, 'http://x');
    assert.equal(to.pathname, '/auth/sso/start');
    assert.equal(to.searchParams.get('idp'), idpId);
    assertSameRequest(to.searchParams.get('return_to'), url);
  });

  test('an email on another domain is not sent anywhere: its password is checked', async () => {
    const url = mcpAuthorizeUrl(client.clientId, pkcePair().challenge);
    const { res } = await signIn(t, url, 'someone@elsewhere.test', 'wrong-password');
    assert.equal(res.statusCode, 401);
    assert.match(res.payload, /Wrong email or password/);
  });

  test('a return_to on another origin is not followed after the IdP', async () => {
    const cookies: Record<string, string> = {};
    const callback = await throughIdp(
      `/auth/sso/start?${new URLSearchParams({ idp: idpId, return_to: '//evil.example/steal' })}`,
      { sub: 'oauth-open-redirect', email: 'redirected@acme.test', email_verified: true },
      cookies,
    );
    assert.equal(callback.statusCode, 303, callback.payload);
    assert.equal(callback.headers.location, '/account');
  });
});

describe('the second step after an SSO sign-in', () => {
  test('its session is recorded as the IdP’s, and `idp remove` ends it at once', async () => {
    // An existing user on the bound domain, with two-step sign-in; the IdP proves no factor.
    const user = await makeUser(t.app, { email: 'two.step@acme.test' });
    const { secret } = await t.app.services.identity.factors.setupTotp(user);
    await t.app.services.identity.factors.enableTotp(user, null, totpAt(secret, clock.now()));
    clock.advance(30_000);

    const url = mcpAuthorizeUrl(client.clientId, pkcePair().challenge);
    const page = await t.inject(url);
    const cookies = setCookies(page);
    const callback = await throughIdp(
      unescape(ssoLink(page.payload)!),
      { sub: 'two-step-sub', email: 'two.step@acme.test', email_verified: true, amr: ['pwd'] },
      cookies,
    );
    assert.equal(callback.statusCode, 200, 'the second step, not yet signed in');
    assert.match(callback.payload, /<h1>Two-step sign-in<\/h1>/);
    assert.equal(cookies.gantry_session, undefined);

    const done = await t.inject({
      method: 'POST',
      url: '/auth/two-step',
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        csrf: hiddenInput(callback.payload, 'csrf')!,
        mfa_token: hiddenInput(callback.payload, 'mfa_token')!,
        code: totpAt(secret, clock.now()),
      }),
    });
    assert.equal(done.statusCode, 303, done.payload);
    assertSameRequest(done.headers.location, url);
    Object.assign(cookies, setCookies(done));
    const session = await t.app.services.identity.browserSessions.signInOf(cookies.gantry_session!);
    assert.equal(session?.userId, user.id);
    const issued = await t.app.kernel.db
      .selectFrom('idp_issued')
      .selectAll()
      .where('kind', '=', 'session')
      .where('ref_id', '=', session!.sessionId)
      .executeTakeFirst();
    assert.equal(issued?.idp_id, idpId, 'recorded as the IdP’s session');

    const consent = await t.inject({ url, headers: { cookie: cookieHeader(cookies) } });
    assert.doesNotMatch(consent.payload, /name="password"/, 'signed in');
    const removed = await t.app.services.idp.remove(idpId);
    assert.ok(removed.revokedSessions >= 1);
    assert.equal(await t.app.services.identity.browserSessions.signInOf(cookies.gantry_session!), null);
    const after = await t.inject({ url, headers: { cookie: cookieHeader(cookies) } });
    assert.match(after.payload, /name="password"/, 'signed out: the sign-in form again');
  });
});
