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
  it('an MCP client: the consent page asks for a workspace, the default preselected, and binds the one chosen', async () => {
    const email = 'mcp-browser@example.test';
    const password = 'long enough pw';
    assert.equal((await g.cli(['user', 'create', '--email', email, '--password', password, '--json'])).code, 0);
    const api = async (path: string, token: string | null, body: unknown) => {
      const res = await fetch(`${g.url}/api/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      assert.ok(res.ok, `${path}: ${res.status}`);
      return ((await res.json()) as { data: Record<string, string> }).data;
    };
    const { accessToken } = await api('/auth/login', null, { email, password });
    const account = await api('/accounts', accessToken, { slug: 'mcp-browser', legalName: 'MCP Browser Ltd' });
    const research = await api(`/accounts/${account.id}/workspaces`, accessToken, { name: 'Research' });
    const created = await g.cli([
      'client',
      'create',
      '--name',
      'MCP App',
      '--type',
      'public',
      '--redirect-uri',
      callbackUrl,
      '--scope',
      'tools:call',
      '--json',
    ]);
    const { clientId } = JSON.parse(created.stdout) as { clientId: string };
    const verifier = randomBytes(32).toString('base64url');
    const resource = `${g.url}/api/v1/mcp`;
    const authorize = `${g.url}/api/v1/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callbackUrl,
      scope: 'tools:call',
      resource,
      state: 'mcp-state',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    })}`;

    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(authorize);
      await page.fill('input[name=email]', email);
      await page.fill('input[name=password]', password);
      await Promise.all([page.waitForURL(/\/oauth\/authorize/), page.click('button[value=password]')]);
      await page.waitForSelector('select[name=workspace_id]');
      assert.equal(await page.inputValue('select[name=workspace_id]'), account.defaultWorkspaceId);
      assert.match((await page.textContent('body'))!, /List and call the tools of one workspace you choose/);
      await page.selectOption('select[name=workspace_id]', { label: 'Research' });
      await Promise.all([page.waitForURL(/\/cb\?/), page.click('button[name=decision][value=allow]')]);
      const landed = received.filter((u) => u.pathname === '/cb').at(-1)!;
      assert.equal(landed.searchParams.get('state'), 'mcp-state');

      const res = await fetch(`${g.url}/api/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: landed.searchParams.get('code')!,
          redirect_uri: callbackUrl,
          code_verifier: verifier,
          client_id: clientId,
          resource,
        }),
      });
      assert.equal(res.status, 200);
      const { access_token: token } = (await res.json()) as { access_token: string };
      const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
      assert.equal(claims.aud, resource);
      assert.equal(claims.workspace_id, research.id);
      // The REST API refuses it.
      const wallet = await fetch(`${g.url}/api/v1/wallet/me`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(wallet.status, 401);
    } finally {
      await browser.close();
    }
  });
});
