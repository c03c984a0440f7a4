import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';

/** A cookie jar for plain fetch: the sign-in and consent pages are driven like a browser would. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

const hidden = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1].replace(/&amp;/g, '&');

describe('OAuth flow against the built binary with oauth4webapi', () => {
  let g: RunningGantry;
  before(async () => (g = await spawnGantry()));
  after(() => g.stop());

  it('discovery, sign-in, consent, code + PKCE, userinfo, wallet, refresh rotation, reuse, revoke, client delete', async () => {
    const user = await g.cli([
      'user',
      'create',
      '--email',
      'o4w@example.test',
      '--password',
      'long enough pw',
      '--name',
      'Olga',
      '--verified',
      '--json',
    ]);
    assert.equal(user.code, 0, user.stderr);
    const userId = (JSON.parse(user.stdout) as { id: string }).id;
    const redirectUri = 'http://127.0.0.1:1/cb';
    const created = await g.cli([
      'client',
      'create',
      '--name',
      'Acme',
      '--type',
      'confidential',
      '--redirect-uri',
      redirectUri,
      '--scope',
      'email:read',
      'profile:read',
      'wallet:read',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const { clientId, clientSecret } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string };

    const issuer = new URL(g.url);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }),
    );
    assert.equal(as.issuer, g.url);
    const client: oauth.Client = { client_id: clientId };
    const clientAuth = oauth.ClientSecretBasic(clientSecret);
    const opts = { [oauth.allowInsecureRequests]: true };

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'email:read profile:read wallet:read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();

    const jar = new Jar();
    const signInPage = await fetch(url, { redirect: 'manual' });
    jar.take(signInPage);
    const signInHtml = await signInPage.text();
    assert.equal(signInPage.status, 200);
    const signedIn = await fetch(as.authorization_endpoint!, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({
        csrf: hidden(signInHtml, 'csrf'),
        request_state: hidden(signInHtml, 'request_state'),
        email: 'o4w@example.test',
        password: 'long enough pw',
      }),
    });
    assert.equal(signedIn.status, 303);
    jar.take(signedIn);
    const consentPage = await fetch(new URL(signedIn.headers.get('location')!, g.url), {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    const consentHtml = await consentPage.text();
    assert.match(consentHtml, /See your wallet balance/);
    const allowed = await fetch(as.authorization_endpoint!, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({
        csrf: hidden(consentHtml, 'csrf'),
        request_state: hidden(consentHtml, 'request_state'),
        decision: 'allow',
      }),
    });
    assert.equal(allowed.status, 303);
    const callback = new URL(allowed.headers.get('location')!);

    // The library checks state and iss (RFC 9207) itself.
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokenResponse = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      redirectUri,
      verifier,
      opts,
    );
    assert.equal(tokenResponse.headers.get('cache-control'), 'no-store');
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.expires_in, 3600);
    assert.equal(tokens.scope, 'email:read profile:read wallet:read');

    const info = await oauth.processUserInfoResponse(
      as,
      client,
      userId,
      await oauth.userInfoRequest(as, client, tokens.access_token, opts),
    );
    assert.equal(info.email, 'o4w@example.test');
    assert.equal(info.email_verified, true);
    assert.equal(info.name, 'Olga');

    const wallet = await fetch(`${g.url}/api/v1/wallet/me`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(wallet.status, 200);
    const accounts = await fetch(`${g.url}/api/v1/oauth/grants`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(accounts.status, 403);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, opts),
    );
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    await assert.rejects(
      async () =>
        oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, opts),
        ),
      (err: oauth.ResponseBodyError) => err.error === 'invalid_grant',
    );
    // Reuse revoked the family: the newest access token is dead too.
    const dead = await oauth.userInfoRequest(as, client, refreshed.access_token, opts);
    assert.equal(dead.status, 401);

    // A second authorization: consent is remembered, so the page redirects at once.
    const verifier2 = oauth.generateRandomCodeVerifier();
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier2));
    const again = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    assert.equal(again.status, 302);
    const params2 = oauth.validateAuthResponse(as, client, new URL(again.headers.get('location')!), state);
    const tokens2 = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params2, redirectUri, verifier2, opts),
    );

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, clientAuth, tokens2.access_token, opts),
    );
    assert.equal((await oauth.userInfoRequest(as, client, tokens2.access_token, opts)).status, 401);

    // client delete from the CLI reaches the running server within a second.
    const verifier3 = oauth.generateRandomCodeVerifier();
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier3));
    const third = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    const tokens3 = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth,
        oauth.validateAuthResponse(as, client, new URL(third.headers.get('location')!), state),
        redirectUri,
        verifier3,
        opts,
      ),
    );
    assert.equal((await oauth.userInfoRequest(as, client, tokens3.access_token, opts)).status, 200);
    const deleted = await g.cli(['client', 'delete', clientId, '--yes', '--json']);
    assert.equal(deleted.code, 0, deleted.stderr);
    const deadline = Date.now() + 1000;
    let status = 200;
    while (Date.now() < deadline && status !== 401) {
      status = (await oauth.userInfoRequest(as, client, tokens3.access_token, opts)).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 401, 'the token stops within a second of the CLI delete');
  });
});
