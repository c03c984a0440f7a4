import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeAccount, makeUser } from '../helpers/factories.js';
import { startFakeIdp, type FakeIdp, type FakeIdpUser } from '../helpers/fake-idp.js';

let t: TestApp;
let idp: FakeIdp;
let idpId: string;
let accountId: string;

before(async () => {
  t = await createTestApp();
  idp = await startFakeIdp({ clientId: 'gantry-sso', clientSecret: 'sso-secret' });
  const owner = await makeUser(t.app);
  accountId = (await makeAccount(t.app, owner.id)).id;
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
});
after(async () => {
  await t.close();
  await idp.close();
});

const setCookies = (res: { headers: Record<string, unknown> }) =>
  ([] as string[]).concat((res.headers['set-cookie'] as string[] | string | undefined) ?? []);

/** Start at Gantry, pass the fake IdP (signing in `who`), and come back to the callback. */
async function ssoAs(who: FakeIdpUser) {
  idp.nextUser = who;
  const start = await t.inject(`/auth/sso/start?idp=${idpId}&return_to=/account`);
  assert.equal(start.statusCode, 302, start.payload);
  const flow = setCookies(start)
    .find((c) => c.startsWith('gantry_sso='))!
    .split(';')[0];
  const atIdp = await fetch(start.headers.location as string, { redirect: 'manual' });
  const back = new URL(atIdp.headers.get('location')!);
  assert.equal(back.pathname, '/auth/sso/callback');
  return t.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: flow } });
}

describe('SSO sign-in through an identity provider', () => {
  test('the account center offers "Continue with Acme"', async () => {
    const res = await t.inject('/account');
    assert.match(res.payload, /Continue with Acme/);
    assert.match(res.payload, /\/auth\/sso\/start\?idp=/);
  });

  test('an email on a bound domain posted to the sign-in form goes to its IdP', async () => {
    const page = await t.inject('/account');
    const cookie = setCookies(page)
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.payload)![1];
    const res = await t.inject({
      method: 'POST',
      url: '/account',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ action: 'signin', csrf, email: 'bob@acme.test', password: 'x' }).toString(),
    });
    assert.equal(res.statusCode, 303, res.payload);
    assert.match(res.headers.location as string, /^\/auth\/sso\/start\?idp=/);
  });

  test('first sign-in makes the user just in time, verified, a member of the IdP account; PKCE, state and nonce sent', async () => {
    const res = await ssoAs({ sub: 'jit-1', email: 'New.Person@acme.test', email_verified: true, name: 'New Person' });
    assert.equal(res.statusCode, 303, res.payload);
    assert.equal(res.headers.location, '/account');
    assert.ok(setCookies(res).some((c) => c.startsWith('gantry_session=')));
    assert.equal(idp.lastAuthorize!.get('code_challenge_method'), 'S256');
    assert.ok(idp.lastAuthorize!.get('state') && idp.lastAuthorize!.get('nonce'));
    const user = await t.app.services.identity.findUserByEmail('new.person@acme.test');
    assert.ok(user && user.email_verified_at !== null && user.password_hash === null);
    const member = await t.app.kernel.db
      .selectFrom('account_members')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    assert.equal(member?.role, 'member');
    assert.equal(member?.status, 'active');
    assert.equal(await t.app.services.idp.linkedUser(idpId, 'jit-1'), user.id);
  });

  test('an existing local user on the bound domain with email_verified is linked', async () => {
    const local = await makeUser(t.app, { email: 'local@acme.test' });
    const res = await ssoAs({ sub: 'link-1', email: 'local@acme.test', email_verified: true });
    assert.equal(res.statusCode, 303, res.payload);
    assert.equal(await t.app.services.idp.linkedUser(idpId, 'link-1'), local.id);
  });

  test('an existing local user of another domain is not taken over: refused page, no link', async () => {
    await makeUser(t.app, { email: 'victim@example.test' });
    const res = await ssoAs({ sub: 'takeover', email: 'victim@example.test', email_verified: true });
    assert.equal(res.statusCode, 403);
    assert.match(res.payload, /already exists here/);
    assert.equal(await t.app.services.idp.linkedUser(idpId, 'takeover'), null);
  });

  test('an unverified email is refused, linked or made', async () => {
    await makeUser(t.app, { email: 'unverified@acme.test' });
    const res = await ssoAs({ sub: 'unv', email: 'unverified@acme.test', email_verified: false });
    assert.equal(res.statusCode, 403);
    assert.match(res.payload, /not verified your email/);
    const fresh = await ssoAs({ sub: 'unv2', email: 'brand-new@acme.test', email_verified: false });
    assert.equal(fresh.statusCode, 403);
    assert.equal(await t.app.services.identity.findUserByEmail('brand-new@acme.test'), undefined);
  });

  test('a callback without the flow cookie, or with a forged state, is refused', async () => {
    idp.nextUser = { sub: 'x', email: 'x@acme.test', email_verified: true };
    const start = await t.inject(`/auth/sso/start?idp=${idpId}&return_to=/account`);
    const atIdp = await fetch(start.headers.location as string, { redirect: 'manual' });
    const back = new URL(atIdp.headers.get('location')!);
    const noCookie = await t.inject(`${back.pathname}${back.search}`);
    assert.equal(noCookie.statusCode, 400);
    const flow = setCookies(start)
      .find((c) => c.startsWith('gantry_sso='))!
      .split(';')[0];
    back.searchParams.set('state', 'forged');
    const forged = await t.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: flow } });
    assert.equal(forged.statusCode, 400);
    assert.match(forged.payload, /could not be accepted/);
  });

  test('amr counts as the second factor only when it names one', async () => {
    const factorOf = async (sub: string) => {
      const userId = (await t.app.services.idp.linkedUser(idpId, sub))!;
      const row = await t.app.kernel.db
        .selectFrom('auth_sessions')
        .select('factor_verified_at')
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      return row?.factor_verified_at ?? null;
    };
    await ssoAs({ sub: 'amr-pwd', email: 'pwd@acme.test', email_verified: true, amr: ['pwd'] });
    assert.equal(await factorOf('amr-pwd'), null);
    await ssoAs({ sub: 'amr-mfa', email: 'mfa@acme.test', email_verified: true, amr: ['pwd', 'mfa'] });
    assert.notEqual(await factorOf('amr-mfa'), null);
  });

  test('the just-in-time user and the membership commit together: an IdP account closed meanwhile makes nobody', async () => {
    const other = await startFakeIdp({ clientId: 'gantry-sso-2', clientSecret: 'sso-secret-2' });
    try {
      const owner = await makeUser(t.app);
      const closing = (await makeAccount(t.app, owner.id)).id;
      const otherId = (
        await t.app.services.idp.add({
          name: 'Closing',
          issuer: other.issuer,
          clientId: 'gantry-sso-2',
          clientSecret: 'sso-secret-2',
          domains: ['closing.test'],
          accountId: closing,
        })
      ).id;
      await t.app.services.accounts.deletion.softDelete({ kind: 'operator' }, closing);
      other.nextUser = { sub: 'late-1', email: 'late@closing.test', email_verified: true };
      const start = await t.inject(`/auth/sso/start?idp=${otherId}&return_to=/account`);
      const flow = setCookies(start)
        .find((c) => c.startsWith('gantry_sso='))!
        .split(';')[0];
      const back = new URL(
        (await fetch(start.headers.location as string, { redirect: 'manual' })).headers.get('location')!,
      );
      const res = await t.inject({ url: `${back.pathname}${back.search}`, headers: { cookie: flow } });
      assert.equal(res.statusCode, 403, res.payload);
      assert.match(res.payload, /not open here any more/);
      assert.equal(await t.app.services.identity.findUserByEmail('late@closing.test'), undefined, 'no user');
      assert.equal(await t.app.services.idp.linkedUser(otherId, 'late-1'), null, 'no link');
    } finally {
      await other.close();
    }
  });

  test('removing the IdP ends the sessions signed in through it', async () => {
    const res = await ssoAs({ sub: 'ending', email: 'ending@acme.test', email_verified: true });
    const session = setCookies(res)
      .find((c) => c.startsWith('gantry_session='))!
      .split(';')[0];
    const before = await t.inject({ url: '/account', headers: { cookie: session } });
    assert.doesNotMatch(before.payload, /Continue with Acme/);
    const removed = await t.app.services.idp.remove(idpId);
    assert.ok(removed.revokedSessions >= 1);
    const after = await t.inject({ url: '/account', headers: { cookie: session } });
    assert.match(after.payload, /name="password"/);
  });
});
