import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { launchBrowser } from '../helpers/browser.js';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';

describe('sign-in and consent in a real browser', () => {
  let g: RunningGantry;
  let callbackServer: Server;
  let callbackUrl: string;
  const received: URL[] = [];

  before(async () => {
    g = await spawnGantry();
    // The third-party app's redirect target: a small real server on loopback.
    callbackServer = createServer((req, res) => {
      received.push(new URL(req.url!, callbackUrl));
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="done">back at the app</p>');
    });
    await new Promise<void>((r) => callbackServer.listen(0, '127.0.0.1', r));
    callbackUrl = `http://127.0.0.1:${(callbackServer.address() as { port: number }).port}/cb`;
  });
  after(async () => {
    callbackServer?.close();
    await g?.stop();
  });

  it('signs in with email and password, sees the scopes, allows, and lands on the redirect with a code', async () => {
    assert.equal(
      (await g.cli(['user', 'create', '--email', 'browser@example.test', '--password', 'long enough pw', '--json']))
        .code,
      0,
    );
    const created = await g.cli([
      'client',
      'create',
      '--name',
      'Browser App',
      '--type',
      'public',
      '--redirect-uri',
      callbackUrl,
      '--scope',
      'email:read',
      'wallet:read',
      '--json',
    ]);
    const { clientId } = JSON.parse(created.stdout) as { clientId: string };
    const verifier = randomBytes(32).toString('base64url');
    const authorize = `${g.url}/api/v1/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callbackUrl,
      scope: 'email:read wallet:read',
      state: 'browser-state',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    })}`;

    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(authorize);
      await page.fill('input[name=email]', 'browser@example.test');
      await page.fill('input[name=password]', 'long enough pw');
      await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[value=password]')]);
      await page.waitForSelector('button[name=decision][value=allow]');
      const text = await page.textContent('body');
      assert.match(text!, /See your email address/);
      assert.match(text!, /See your wallet balance/);
      await Promise.all([page.waitForURL(/\/cb\?/), page.click('button[name=decision][value=allow]')]);
      const landed = received.filter((u) => u.pathname === '/cb').at(-1)!;
      assert.ok(landed.searchParams.get('code'));
      assert.equal(landed.searchParams.get('state'), 'browser-state');
      assert.equal(landed.searchParams.get('iss'), g.url);

      const res = await fetch(`${g.url}/api/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: landed.searchParams.get('code')!,
          redirect_uri: callbackUrl,
          code_verifier: verifier,
          client_id: clientId,
        }),
      });
      assert.equal(res.status, 200);
      const { access_token: accessToken } = (await res.json()) as { access_token: string };
      const info = await fetch(`${g.url}/api/v1/oauth/userinfo`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      assert.equal(((await info.json()) as { email: string }).email, 'browser@example.test');
    } finally {
      await browser.close();
    }
  });
});
