/// <reference lib="dom" />
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { createTestApp, freePort } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { makeUser } from '../helpers/factories.js';
import { withJson } from '../helpers/json-inject.js';
import { gatedTool } from '../helpers/mcp-approvals.js';
import { authorizeQuery, makeClient, pkcePair } from '../helpers/oauth.js';
import { pageChecker, watchCsp } from '../helpers/page-checks.js';
import { totpAt } from '../helpers/second-factors.js';
import { ManualClock } from '../../src/lib/clock.js';

/**
 * The account center, two-step sign-in and passkeys in Chromium (docs/identity.md), on a host
 * name origin (http://localhost:PORT): WebAuthn runs only there. Passkeys go through Chromium's
 * virtual authenticator (the DevTools WebAuthn domain), so the browser's real WebAuthn API meets
 * @simplewebauthn on both ends. TOTP codes are computed here from the key the page shows. Every
 * new page state is checked by axe-core, light and dark, under the pages' real CSP.
 */
describe('the account center, two-step sign-in and passkeys in a real browser', () => {
  let t: ReturnType<typeof withJson>;
  let setup: Awaited<ReturnType<typeof gatedTool>>;
  let browser: Browser;
  let base: string;
  const clock = new ManualClock(new Date());
  const check = pageChecker();

  before(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    t = withJson(
      await createTestApp({
        clock,
        port,
        env: { GANTRY_PUBLIC_URL: base, GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', GANTRY_RATE_LIMIT_MULTIPLIER: '20' },
      }),
    );
    setup = await gatedTool(t);
    await t.server.start();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await setup?.fake.close();
    await t?.close();
  });

  /** axe-core on the page as it is, in light and in dark (prefers-color-scheme). */
  async function checkBoth(page: Page, name: string, csp: string[]) {
    await page.emulateMedia({ colorScheme: 'light' });
    await check(page, name, csp);
    await page.emulateMedia({ colorScheme: 'dark' });
    await check(page, `${name}-dark`, csp);
    await page.emulateMedia({ colorScheme: 'light' });
  }

  /** A context with a virtual platform authenticator: resident keys, user verification that succeeds. */
  async function withAuthenticator(): Promise<{
    context: BrowserContext;
    page: Page;
    csp: string[];
    cdp: CDPSession;
    authenticatorId: string;
  }> {
    const context = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    const page = await context.newPage();
    const csp = watchCsp(page);
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = (await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    })) as { authenticatorId: string };
    return { context, page, csp, cdp, authenticatorId };
  }

  const signInWithPassword = async (page: Page, email: string, password: string) => {
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]:has-text("Sign in")')]);
  };

  it('signs in, adds a passkey, turns on two-step sign-in, signs out, signs in with a code, then with the passkey', async () => {
    const user = await makeUser(t.app, { fullName: 'Ada Account' });
    const { context, page, csp, cdp, authenticatorId } = await withAuthenticator();
    try {
      // No browser session: the sign-in form first, with the passkey button.
      assert.equal((await page.goto(`${base}/account`))?.status(), 200);
      assert.equal(await page.title(), 'Sign in · Gantry');
      await page.waitForSelector('button[data-passkey="authenticate"]', { state: 'visible' });
      await checkBoth(page, 'account-sign-in', csp);

      await signInWithPassword(page, user.email, user.password);
      await page.waitForSelector('h1:has-text("Your account")');
      assert.equal(new URL(page.url()).pathname, '/account');
      const text = await page.textContent('main');
      assert.match(text!, /Ada Account/);
      assert.match(text!, new RegExp(user.email.replace(/[.]/g, '\\.')));
      assert.match(text!, /This session/);
      assert.match(text!, /No passkeys yet/);
      assert.match(text!, /No apps can reach your account/);
      await checkBoth(page, 'account-center', csp);

      // Add a passkey: the browser's WebAuthn API, the virtual authenticator, the server's library.
      await page.fill('#passkey_name', 'Test laptop');
      await Promise.all([
        page.waitForURL(/\/account\?done=passkey-added/),
        page.click('button[data-passkey="register"]'),
      ]);
      assert.match((await page.textContent('[role=status]'))!, /The passkey is added/);
      assert.match((await page.textContent('#passkeys-h + p + ul'))!, /Test laptop/);
      const { credentials } = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })) as {
        credentials: Array<{ isResidentCredential: boolean; signCount: number }>;
      };
      assert.equal(credentials.length, 1);
      assert.equal(credentials[0].isResidentCredential, true);
      await checkBoth(page, 'account-center-passkey', csp);

      // Two-step sign-in: the QR code and key, a code computed from that key, the recovery codes.
      await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Turn on two-step sign-in")')]);
      await page.waitForSelector('.qr svg[role=img]');
      const key = (await page.textContent('code.secret'))!.replace(/\s+/g, '');
      assert.match(key, /^[A-Z2-7]{32}$/);
      await checkBoth(page, 'two-step-setup', csp);
      await page.fill('#code', '000000');
      await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Turn on")')]);
      assert.match((await page.textContent('[role=alert]'))!, /That code is not right/);
      await checkBoth(page, 'two-step-setup-wrong', csp);
      await page.fill('#code', totpAt(key, clock.now()));
      await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Turn on")')]);
      const codes = await page.$$eval('ol.recovery-codes code', (els) => els.map((e) => e.textContent ?? ''));
      assert.equal(codes.length, 10);
      await checkBoth(page, 'recovery-codes', csp);
      await Promise.all([page.waitForURL(`${base}/account`), page.click('a:has-text("I have saved them")')]);
      assert.match((await page.textContent('#two-step-h + p'))!, /On since .* 10 recovery codes left/);

      // Sign out, then back in: the password, then the second step asks for the code.
      await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Sign out of this browser")')]);
      assert.match((await page.textContent('h1'))!, /You are signed out/);
      await checkBoth(page, 'signed-out', csp);
      await Promise.all([page.waitForLoadState('load'), page.click('a:has-text("Sign in again")')]);
      await signInWithPassword(page, user.email, user.password);
      await page.waitForSelector('h1:has-text("Two-step sign-in")');
      await page.waitForSelector('button[data-passkey="authenticate"]', { state: 'visible' });
      await checkBoth(page, 'two-step', csp);
      clock.advance(30_000); // the code that turned it on spent its time step
      await page.fill('#code', '123456');
      await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Continue")')]);
      assert.match((await page.textContent('[role=alert]'))!, /That code is wrong or was already used/);
      assert.equal(await page.getAttribute('#code', 'aria-invalid'), 'true');
      await checkBoth(page, 'two-step-wrong', csp);
      await page.fill('#code', totpAt(key, clock.now()));
      await Promise.all([page.waitForURL(`${base}/account`), page.click('button:has-text("Continue")')]);
      await page.waitForSelector('h1:has-text("Your account")');

      // Signed out again, "Sign in with a passkey" alone signs in (a discoverable credential).
      await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Sign out of this browser")')]);
      await page.goto(`${base}/account`);
      await Promise.all([page.waitForURL(`${base}/account`), page.click('button[data-passkey="authenticate"]')]);
      await page.waitForSelector('h1:has-text("Your account")');
      const sessions = await page.$$eval('#sessions-h ~ ul li', (els) => els.length);
      assert.ok(sessions >= 1);
      const signCount = (
        (await cdp.send('WebAuthn.getCredentials', { authenticatorId })) as {
          credentials: Array<{ signCount: number }>;
        }
      ).credentials[0].signCount;
      assert.ok(signCount >= 1, 'the counter moved');

      // Remove the passkey.
      await Promise.all([
        page.waitForURL(/done=passkey-removed/),
        page.click('button[aria-label="Remove passkey Test laptop"]'),
      ]);
      assert.match((await page.textContent('main'))!, /No passkeys yet/);
    } finally {
      await context.close();
    }
  });

  it('signs in to an app with the password and a code, and approves a gated call with a passkey', async () => {
    const { context, page, csp } = await withAuthenticator();
    try {
      const admin = setup.team.members.admin;
      const client = await makeClient(t as never, { name: 'Browser App', type: 'public' });
      // The admin adds a passkey and turns on two-step sign-in through the API.
      const secret = (await t.inject({ method: 'POST', url: '/api/v1/auth/totp/setup', headers: admin.headers })).json()
        .data.secret;
      await t.inject({
        method: 'POST',
        url: '/api/v1/auth/totp/enable',
        headers: admin.headers,
        payload: { code: totpAt(secret, clock.now()) },
      });
      clock.advance(30_000);

      await page.goto(`${base}${authorizeQuery(client.clientId, pkcePair().challenge)}`);
      await page.waitForSelector('button[data-passkey="authenticate"]', { state: 'visible' });
      await checkBoth(page, 'oauth-sign-in-passkey', csp);
      await signInWithPassword(page, admin.user.email, admin.user.password);
      await page.waitForSelector('h1:has-text("Two-step sign-in")');
      await page.fill('#code', totpAt(secret, clock.now()));
      await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Continue")')]);
      await page.waitForSelector('button[name=decision][value=allow]');

      // The account center: add a passkey to this browser's authenticator.
      await page.goto(`${base}/account`);
      await page.fill('#passkey_name', 'Admin key');
      await Promise.all([page.waitForURL(/done=passkey-added/), page.click('button[data-passkey="register"]')]);

      // More than 5 minutes later, an approval asks to confirm with a code or the passkey.
      clock.advance(6 * 60_000);
      const gate = await setup.gate({ target: '/browser' });
      if (gate.proceed) throw new Error('expected a pending approval');
      await page.goto(`${base}/approvals/${gate.approval.id}`);
      await page.waitForSelector('#code');
      await page.waitForSelector('button[data-passkey][value=approve]', { state: 'visible' });
      await checkBoth(page, 'approval-step-up', csp);
      await Promise.all([page.waitForLoadState('load'), page.click('button[name=decision][value=approve]')]);
      assert.match((await page.textContent('[role=alert]'))!, /Enter a code/);
      await checkBoth(page, 'approval-step-up-missing', csp);
      await Promise.all([
        page.waitForURL(`${base}/approvals/${gate.approval.id}`),
        page.click('button[data-passkey][value=approve]'),
      ]);
      await page.waitForSelector('#status[data-status="approved"]');
    } finally {
      await context.close();
    }
  });

  it('on an IP-address origin the account center says passkeys need a host name, and offers no button', async () => {
    const port = await freePort();
    const ipApp = await createTestApp({ port, env: { GANTRY_PUBLIC_URL: `http://127.0.0.1:${port}` } });
    await ipApp.server.start();
    const user = await makeUser(ipApp.app);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const csp = watchCsp(page);
      await page.goto(`http://127.0.0.1:${port}/account`);
      assert.equal(await page.$('button[data-passkey]'), null);
      await signInWithPassword(page, user.email, user.password);
      await page.waitForSelector('#passkeys-unavailable');
      assert.match((await page.textContent('#passkeys-unavailable'))!, /Passkeys need a host name.*localhost/);
      assert.equal(await page.$('button[data-passkey]'), null);
      await checkBoth(page, 'account-center-ip-origin', csp);
    } finally {
      await context.close();
      await ipApp.close();
    }
  });
});
