/// <reference lib="dom" />
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestApp, insertionOrder } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { makeUser } from '../helpers/factories.js';
import { withJson } from '../helpers/json-inject.js';
import { gatedTool } from '../helpers/mcp-approvals.js';
import { startProtectedMcp } from '../helpers/mcp-protected.js';
import { authorizeQuery, makeClient, pkcePair } from '../helpers/oauth.js';
import { pageChecker, SCREENSHOT_DIR, watchCsp } from '../helpers/page-checks.js';

/**
 * Every page family as a person meets it, in Chromium under the pages' real CSP: each state is
 * checked by axe-core (no serious or critical finding) and kept as a screenshot in
 * test-results/pages/ (docs/kernel.md, Pages).
 */
const C = '/api/v1/connectors';

describe('the pages in a real browser: accessible, styled under the strict CSP, screenshots kept', () => {
  let t: ReturnType<typeof withJson>;
  let setup: Awaited<ReturnType<typeof gatedTool>>;
  let browser: Browser;
  let base: string;
  const check = pageChecker();

  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    setup = await gatedTool(t);
    const s = t.app.services.status;
    await s.createService({ slug: 'api', name: 'Public API', sortOrder: 1 });
    await s.createService({ slug: 'dash', name: 'Dashboard', sortOrder: 2, description: 'The web dashboard' });
    await s.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST endpoints' });
    await s.createComponent({ serviceSlug: 'dash', slug: 'dash-ui', name: 'Web UI' });
    await s.setComponentStatus('api-rest', 'partial_outage');
    await s.createIncident({
      title: 'Elevated API errors',
      impact: 'partial',
      message: 'We are investigating',
      serviceSlugs: ['api'],
    });
    await t.server.start();
    base = t.server.info.uri;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await setup?.fake.close();
    await t?.close();
  });

  async function open(context: BrowserContext): Promise<{ page: Page; csp: string[] }> {
    const page = await context.newPage();
    return { page, csp: watchCsp(page) };
  }

  it('the checker itself: a page with an unlabelled input or inline style fails with a readable report', async () => {
    const context = await browser.newContext();
    try {
      const { page, csp } = await open(context);
      await page.goto(`${base}/auth/forgot-password`);
      await page.evaluate(() => {
        document.querySelector('label')?.remove();
      });
      await assert.rejects(check(page, 'checker-unlabelled', csp), (err: Error) => {
        assert.match(
          err.message,
          /axe-core found serious or critical problems:\n- label \(critical\): Form elements must have labels/,
        );
        assert.match(err.message, /at #email:/);
        return true;
      });
      // An inline style is refused by the CSP, and the refusal is reported.
      const refused = page.waitForEvent('console', (m) => /Content Security Policy/.test(m.text()));
      await page.evaluate(() => {
        const style = document.createElement('style');
        style.textContent = 'body{background:red}';
        document.head.append(style);
      });
      await refused;
      // Chromium words it 'Refused to apply inline style' or 'Applying inline style violates', by version.
      assert.match(csp.join('\n'), /inline style.*Content Security Policy directive.*style-src 'self'/);
    } finally {
      await context.close();
    }
  });

  it('sign-in, its error, the link sent, the link landing, consent, sign out, password reset', async () => {
    const user = await makeUser(t.app);
    const client = await makeClient(t, { name: 'Reports App', type: 'public' });
    const url = `${base}${authorizeQuery(client.clientId, pkcePair().challenge)}`;
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    try {
      const { page, csp } = await open(context);
      assert.equal((await page.goto(url))?.status(), 200);
      assert.equal(await page.title(), 'Sign in · Gantry');
      await check(page, 'sign-in', csp);

      // The focus starts in the email field (autofocus, docs/kernel.md, Pages), and it is visible.
      const focused = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement;
        const style = getComputedStyle(el);
        return { id: el.id, outline: `${style.outlineStyle} ${style.outlineWidth}` };
      });
      assert.deepEqual(focused, { id: 'email', outline: 'solid 3px' });
      // The primary action looks primary, the other one secondary.
      const colours = await page.evaluate(() =>
        ['button[value=password]', 'button[value=magic_link]'].map(
          (s) => getComputedStyle(document.querySelector(s)!).backgroundColor,
        ),
      );
      assert.deepEqual(colours, ['rgb(31, 95, 191)', 'rgb(255, 255, 255)']);

      await page.fill('#email', user.email);
      await page.fill('#password', 'not the password');
      const wrong = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('button[value=password]'),
      ]);
      assert.equal(wrong[0].status(), 401);
      assert.equal(await page.locator('[role=alert]').innerText(), 'Wrong email or password.');
      await check(page, 'sign-in-error', csp);

      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('button[value=magic_link]'),
      ]);
      assert.match(await page.locator('[role=status]').innerText(), /a sign-in link is on its way/);
      await check(page, 'sign-in-link-sent', csp);

      const mail = await t.app.kernel.db
        .selectFrom('mail_outbox')
        .select('body_text')
        .where('to_address', '=', user.email)
        .orderBy('created_at', 'desc')
        .orderBy(insertionOrder(), 'desc')
        .executeTakeFirstOrThrow();
      const link = new URL(/https?:\/\/\S+\/auth\/magic\?token=\S+/.exec(mail.body_text)![0]);
      await page.goto(`${base}${link.pathname}${link.search}`);
      await check(page, 'magic-link', csp);
      await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('button[type=submit]')]);

      await page.waitForSelector('button[name=decision][value=allow]');
      assert.equal(await page.title(), 'Allow access · Gantry');
      assert.match(await page.locator('main').innerText(), /You will be sent back to app\.example/);
      assert.match(
        await page.locator('main').innerText(),
        new RegExp(`Signed in as ${user.email.replace(/\./g, '\\.')}`),
      );
      await check(page, 'consent', csp);

      await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('text=Not you? Sign out')]);
      await page.waitForSelector('input[name=password]');
      assert.equal(await page.title(), 'Sign in · Gantry');
      assert.equal(
        (await context.cookies()).some((c) => c.name === 'gantry_session' && c.value !== ''),
        false,
      );

      await Promise.all([page.waitForURL(/\/auth\/forgot-password\?/), page.click('text=Forgot your password?')]);
      await check(page, 'forgot-password', csp);
      await page.fill('#email', user.email);
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('button[type=submit]'),
      ]);
      assert.match(await page.locator('[role=status]').innerText(), /six-digit code is on its way/);
      assert.equal(await page.inputValue('#email'), user.email);
      await check(page, 'reset-code-sent', csp);

      // A wrong code is refused on the same form; the code from the mail sets the new password.
      await page.fill('#code', '000000');
      await page.fill('#password', 'a brand new password');
      const refused = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('button[type=submit]'),
      ]);
      assert.equal(refused[0].status(), 410);
      assert.match(await page.locator('[role=alert]').innerText(), /This code does not match the one we sent/);
      await check(page, 'reset-wrong-code', csp);
      const resetMail = await t.app.kernel.db
        .selectFrom('mail_outbox')
        .select('body_text')
        .where('to_address', '=', user.email)
        .orderBy('created_at', 'desc')
        .orderBy(insertionOrder(), 'desc')
        .executeTakeFirstOrThrow();
      await page.fill('#code', /code is (\d{6})/.exec(resetMail.body_text)![1]);
      await page.fill('#password', 'a brand new password');
      const changed = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('button[type=submit]'),
      ]);
      assert.equal(changed[0].status(), 200);
      assert.equal(await page.title(), 'Password changed · Gantry');
      await check(page, 'password-changed', csp);

      // "Continue signing in" returns to the same request, where the new password works.
      await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('text=Continue signing in')]);
      await page.fill('#email', user.email);
      await page.fill('#password', 'a brand new password');
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('button[value=password]'),
      ]);
      await page.waitForSelector('button[name=decision][value=allow]');
    } finally {
      await context.close();
    }
  });

  it("the operator's brand: its name in the title and header, its logo allowed by the CSP and nothing else", async () => {
    const branded = await createTestApp({
      env: { GANTRY_BRAND_NAME: 'Acme Cloud', GANTRY_BRAND_LOGO_URL: '/brand/logo.svg' },
    });
    // Played by the operator's reverse proxy in production (docs/operations.md, Branding).
    branded.server.route({
      method: 'GET',
      path: '/brand/logo.svg',
      options: { auth: false },
      handler: (_request, h) =>
        h
          .response(
            '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><rect width="32" height="32" rx="6" fill="#c2410c"/></svg>',
          )
          .type('image/svg+xml'),
    });
    const client = await makeClient(branded, { name: 'Reports App', type: 'public' });
    await branded.server.start();
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    try {
      const { page, csp } = await open(context);
      const url = `${branded.server.info.uri}${authorizeQuery(client.clientId, pkcePair().challenge)}`;
      assert.equal((await page.goto(url))?.status(), 200);
      assert.equal(await page.title(), 'Sign in · Acme Cloud');
      assert.equal((await page.locator('header.brand').innerText()).trim(), 'Acme Cloud');
      const logo = page.locator('header.brand img');
      assert.equal(await logo.getAttribute('alt'), '');
      await logo.evaluate((img: HTMLImageElement) =>
        img.complete ? undefined : new Promise((resolve) => img.addEventListener('load', resolve, { once: true })),
      );
      assert.equal(await logo.evaluate((img: HTMLImageElement) => img.naturalWidth), 32, 'the logo loaded');
      await check(page, 'sign-in-branded', csp);
      // An image from anywhere else is refused.
      const refused = page.waitForEvent('console', (m) => /Content Security Policy/.test(m.text()));
      await page.evaluate(() => {
        const img = document.createElement('img');
        img.src = 'https://images.example.com/x.png';
        document.body.append(img);
      });
      await refused;
      assert.match(csp.join('\n'), /img-src 'self'/);
    } finally {
      await context.close();
      await branded.close();
    }
  });

  it('the approval page: signing in, pending, decided, and its not-found page', async () => {
    const gate = await setup.gate({ target: '/srv/data', token: 'hidden' });
    if (gate.proceed) throw new Error('expected a pending approval');
    const owner = setup.team.owner.user;
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    try {
      const { page, csp } = await open(context);
      assert.equal((await page.goto(`${base}/approvals/${gate.approval.id}`))?.status(), 401);
      await check(page, 'approval-sign-in', csp);
      await page.fill('#email', owner.email);
      await page.fill('#password', owner.password);
      await Promise.all([page.waitForURL(/\/approvals\//), page.click('button[type=submit]')]);
      await page.waitForSelector('button[name=decision][value=approve]');
      assert.equal(await page.title(), 'Approve a tool call · Gantry');
      await check(page, 'approval', csp);
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('button[value=approve]'),
      ]);
      await page.waitForSelector('#status[data-status=approved]');
      await check(page, 'approval-decided', csp);

      assert.equal((await page.goto(`${base}/approvals/${randomUUID()}`))?.status(), 404);
      await check(page, 'error-approval-not-found', csp);
    } finally {
      await context.close();
    }
  });

  it('finishing a connector link another browser came back with: signing in, confirming, and a refusal', async () => {
    const server = await startProtectedMcp([{ name: 'whoami', inputSchema: { type: 'object' } }]);
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    try {
      const owner = setup.team.owner;
      const inst = await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: owner.headers,
        payload: {
          connectorKey: 'mcp-generic',
          displayName: 'Mail',
          config: { url: server.url },
          credentialMode: 'per_user',
        },
      });
      // Started by the API (a client on another site): this browser has no link cookie.
      const started = await t.inject({
        method: 'POST',
        url: `${C}/instances/${inst.json().data.id}/oauth/initiate`,
        headers: owner.headers,
      });
      const back = new URL(
        String((await fetch(started.json().data.redirectUrl, { redirect: 'manual' })).headers.get('location')),
      );
      const { page, csp } = await open(context);
      assert.equal((await page.goto(`${base}${back.pathname}${back.search}`))?.status(), 401);
      assert.match(page.url(), /\/connectors\/link\/[0-9a-f]{64}$/);
      await check(page, 'link-sign-in', csp);
      await page.fill('#email', owner.user.email);
      await page.fill('#password', owner.user.password);
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'GET' && r.status() === 200),
        page.click('button[type=submit]'),
      ]);
      await page.waitForSelector('button[name=decision][value=confirm]');
      assert.equal(await page.title(), 'Finish connecting · Gantry');
      await check(page, 'link-confirm', csp);
      // Connect: the answer sends the browser to the settings page of GANTRY_WEB_URL.
      const linkUrl = page.url();
      const [posted] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.click('button[value=confirm]'),
      ]);
      assert.equal(posted.status(), 303);
      assert.equal(new URL(String(posted.headers().location)).searchParams.get('status'), 'success');
      // Once finished there is nothing left here (a new tab: this one went on to GANTRY_WEB_URL).
      const { page: later, csp: laterCsp } = await open(context);
      assert.equal((await later.goto(linkUrl))?.status(), 404);
      await check(later, 'link-nothing-to-finish', laterCsp);
    } finally {
      await context.close();
      await server.close();
    }
  });

  it('the status page on a desktop and a phone, uptime with two decimals', async () => {
    for (const [name, options] of [
      ['status', { viewport: { width: 1024, height: 900 } }],
      ['status-phone', { viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true }],
    ] as const) {
      const context = await browser.newContext(options);
      try {
        const { page, csp } = await open(context);
        assert.equal((await page.goto(`${base}/status`))?.status(), 200);
        assert.equal(await page.title(), 'Status: Partial System Outage · Gantry');
        for (const legend of await page.locator('.legend span:nth-child(2)').allInnerTexts())
          assert.match(legend, /^\d{1,3}\.\d{2}% uptime$/);
        await check(page, name, csp);
      } finally {
        await context.close();
      }
    }
  });

  it('error pages: a request that cannot be completed, a kernel error in HTML', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    try {
      const { page, csp } = await open(context);
      const invalid = await page.goto(`${base}/api/v1/oauth/authorize?client_id=${randomUUID()}&response_type=code`);
      assert.equal(invalid?.status(), 400);
      assert.equal(await page.locator('h1').innerText(), 'This sign-in request cannot be completed');
      await check(page, 'error-invalid-request', csp);
      const kernel = await page.goto(`${base}/api/v1/connectors/oauth/NOT_A_KEY/callback`);
      assert.equal(kernel?.status(), 400);
      assert.equal(await page.locator('h1').innerText(), 'This request cannot be completed');
      await check(page, 'error-kernel', csp);
    } finally {
      await context.close();
    }
    assert.ok(SCREENSHOT_DIR.endsWith('test-results/pages/'));
  });
});
