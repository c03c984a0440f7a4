/// <reference lib="dom" />
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestApp, insertionOrder } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { makeTeam, makeUser, TEST_PASSWORD } from '../helpers/factories.js';
import { withJson } from '../helpers/json-inject.js';
import { call } from '../helpers/accounts.js';
import { gatedTool } from '../helpers/mcp-approvals.js';
import { mcpAuthorizeUrl, mcpSetup } from '../helpers/mcp-oauth.js';
import { authorizeQuery, makeClient, pkcePair } from '../helpers/oauth.js';
import { focused, pageChecker, watchCsp } from '../helpers/page-checks.js';

/**
 * The pages without dead ends, in Chromium (docs/kernel.md, Pages): every state checked by
 * axe-core in the light and the dark scheme, where the focus starts and where it goes after an
 * error, the next step of every final page, and what a browser gets where an API client gets
 * JSON. Screenshots in test-results/pages/.
 */
describe('pages without dead ends, in a real browser, light and dark', () => {
  let t: ReturnType<typeof withJson>;
  let browser: Browser;
  let base: string;
  const check = pageChecker();

  before(async () => {
    t = withJson(
      await createTestApp({ env: { GANTRY_BRAND_NAME: 'Northwind Cloud', GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }),
    );
    await t.server.start();
    base = t.server.info.uri;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function withPage(run: (page: Page, csp: string[], context: BrowserContext) => Promise<void>) {
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    try {
      const page = await context.newPage();
      await run(page, watchCsp(page), context);
    } finally {
      await context.close();
    }
  }
  const submit = (page: Page, selector: string) =>
    Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click(selector)]).then(([r]) => r);
  const lastMail = (to: string, kind: string) =>
    t.app.kernel.db
      .selectFrom('mail_outbox')
      .select('body_text')
      .where('to_address', '=', to)
      .where('kind', '=', kind)
      .orderBy(insertionOrder(), 'desc')
      .executeTakeFirstOrThrow()
      .then((m) => m.body_text);
  const pathOfLink = (text: string, path: string) => {
    const url = new URL(new RegExp(`https?://\\S+${path.replace(/[/?]/g, '\\$&')}\\S+`).exec(text)![0]);
    return `${base}${url.pathname}${url.search}`;
  };
  const nextSteps = (page: Page) =>
    page.locator('.next a.btn').evaluateAll((links) => links.map((a) => [a.getAttribute('href'), a.textContent]));

  it('an unknown path and the home page: pages for the browser, the envelope for an API client', async () => {
    await withPage(async (page, csp) => {
      const missing = await page.goto(`${base}/logout`);
      assert.equal(missing?.status(), 404);
      assert.equal(await page.title(), 'Page not found · Northwind Cloud');
      assert.match(await page.locator('.reference code').innerText(), /^[0-9a-f-]{36}$/);
      await check(page, 'dead-ends-404', csp);
      await Promise.all([page.waitForURL(`${base}/`), page.click('text=Go to the home page')]);
      assert.equal(await page.title(), 'Home · Northwind Cloud');
      assert.equal(await page.locator('h1').innerText(), 'Welcome to Northwind Cloud');
      assert.equal(await page.locator('a.btn-primary').getAttribute('href'), '/account');
      await check(page, 'dead-ends-home', csp);
      await Promise.all([page.waitForURL(`${base}/status`), page.click('text=Service status')]);

      // The icon the pages link loads under the CSP (no violation reported by check()).
      const icon = await page.goto(`${base}/favicon.ico`);
      assert.equal(icon?.headers()['content-type'], 'image/svg+xml');
    });
    // The same addresses for an API client: JSON, as before.
    for (const path of ['/logout', '/', '/api/v1/nope']) {
      const res = await fetch(`${base}${path}`, { headers: { accept: 'application/json' } });
      assert.equal(res.status, 404, path);
      assert.match(String(res.headers.get('content-type')), /^application\/json/, path);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'NOT_FOUND', path);
    }
  });

  it('focus: on the first empty field after load, on the error summary after an error', async () => {
    await withPage(async (page, csp) => {
      await page.goto(`${base}/auth/forgot-password`);
      assert.deepEqual(await focused(page), { tag: 'input', id: 'email', role: '' });
      await page.fill('#email', 'not an email');
      // The browser's own check (type=email) would stop it first; the server's answer is what counts here.
      await page.locator('form').evaluate((form: HTMLFormElement) => {
        form.noValidate = true;
      });
      assert.equal((await submit(page, 'button[type=submit]')).status(), 400);
      assert.deepEqual(await focused(page), { tag: 'p', id: '', role: 'alert' });
      assert.equal(await page.locator(':focus').innerText(), 'Enter the email of your account.');
      // Tab from the summary reaches the form.
      await page.keyboard.press('Tab');
      assert.equal((await focused(page)).id, 'email');
      await check(page, 'dead-ends-forgot-error', csp);

      // The sign-in form of an authorization request: the email, then after a wrong password the summary.
      const user = await makeUser(t.app);
      const client = await makeClient(t, { name: 'Reports App' });
      await page.goto(`${base}${authorizeQuery(client.clientId, pkcePair().challenge)}`);
      assert.equal((await focused(page)).id, 'email');
      await page.fill('#email', user.email);
      await page.fill('#password', 'wrong password here');
      assert.equal((await submit(page, 'button[value=password]')).status(), 401);
      assert.equal((await focused(page)).role, 'alert');
      assert.equal(await page.inputValue('#email'), user.email);
      assert.equal(await page.inputValue('#password'), '');
    });
  });

  it('the invitation: names account and inviter; registering, a wrong password keeping the form, accepting, next steps', async () => {
    const { owner, account } = await makeTeam(t.app);
    const inviter = (await t.app.services.identity.getUser(owner.user.id)).full_name!;
    const newcomer = `newcomer-${Date.now()}@example.test`;
    const known = await makeUser(t.app);
    for (const email of [newcomer, known.email])
      assert.equal(
        (await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email, role: 'analyst' })).status,
        201,
      );

    await withPage(async (page, csp) => {
      // No user has the address: registration.
      await page.goto(pathOfLink(await lastMail(newcomer, 'invitation'), '/invitations/accept?token='));
      assert.equal(await page.locator('h1').innerText(), `Join ${account.legalName}`);
      assert.match(
        await page.locator('main').innerText(),
        new RegExp(`${inviter} invited you to join ${account.legalName} on Northwind Cloud as analyst`),
      );
      assert.match(
        String(await page.locator('main time').getAttribute('datetime')),
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
      );
      assert.deepEqual(await focused(page), { tag: 'input', id: 'full_name', role: '' });
      await check(page, 'dead-ends-invitation-register', csp);
      await page.fill('#full_name', 'Ada Lovelace');
      await page.fill('#password', 'short');
      // The browser's own check (minlength) stops it first; the server's answer is what counts here.
      await page.locator('#password').evaluate((el: HTMLInputElement) => el.removeAttribute('minlength'));
      assert.equal((await submit(page, 'button[type=submit]')).status(), 400);
      assert.equal((await focused(page)).role, 'alert');
      assert.equal(await page.inputValue('#full_name'), 'Ada Lovelace');
      await check(page, 'dead-ends-invitation-register-error', csp);
      await page.fill('#password', 'a long enough password');
      assert.equal((await submit(page, 'button[type=submit]')).status(), 200);
      assert.equal(await page.locator('h1').innerText(), `Welcome to ${account.legalName}`);
      assert.deepEqual(await nextSteps(page), [
        ['/account', 'Go to your account'],
        ['/', 'Go to the home page'],
      ]);
      await check(page, 'dead-ends-invitation-accepted', csp);
    });

    await withPage(async (page, csp) => {
      // A user exists: sign in; a wrong password keeps the invitation, the email and the error.
      await page.goto(pathOfLink(await lastMail(known.email, 'invitation'), '/invitations/accept?token='));
      assert.equal(await page.inputValue('#email'), known.email);
      assert.equal((await focused(page)).id, 'password');
      await check(page, 'dead-ends-invitation-sign-in', csp);
      await page.fill('#password', 'not the password');
      assert.equal((await submit(page, 'button[type=submit]')).status(), 401);
      assert.equal((await focused(page)).role, 'alert');
      assert.equal(await page.locator('[role=alert]').innerText(), 'Wrong email or password.');
      assert.equal(await page.inputValue('#email'), known.email);
      assert.equal(await page.inputValue('#password'), '');
      assert.match(await page.locator('main').innerText(), new RegExp(`invited you to join ${account.legalName}`));
      await check(page, 'dead-ends-invitation-wrong-password', csp);
      await page.fill('#password', TEST_PASSWORD);
      await Promise.all([page.waitForSelector('text=Accept the invitation'), page.click('button[type=submit]')]);
      await check(page, 'dead-ends-invitation-accept', csp);
      assert.equal((await submit(page, 'button[type=submit]')).status(), 200);
      assert.match(await page.locator('[role=status]').innerText(), /You are now a member of .+ as analyst\./);
    });
  });

  it('final pages lead on: email confirmed, a used link, a reset from the mail, sign-in links, the connector outcome', async () => {
    const address = `final-${Date.now()}@example.test`;
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: '/api/v1/auth/register',
          payload: { email: address, password: 'a good password' },
        })
      ).statusCode,
      201,
    );
    await withPage(async (page, csp) => {
      const confirm = pathOfLink(await lastMail(address, 'email_confirmation'), '/auth/confirm-email?token=');
      await page.goto(confirm);
      assert.match(await page.locator('main').innerText(), /the Northwind Cloud account/);
      assert.equal((await submit(page, 'button[type=submit]')).status(), 200);
      assert.equal(await page.title(), 'Email confirmed · Northwind Cloud');
      assert.deepEqual(await nextSteps(page), [
        ['/account', 'Continue to your account'],
        ['/', 'Go to the home page'],
      ]);
      await check(page, 'dead-ends-email-confirmed', csp);

      await page.goto(confirm);
      assert.equal((await submit(page, 'button[type=submit]')).status(), 410);
      assert.equal((await focused(page)).role, 'alert');
      await check(page, 'dead-ends-confirm-link-used', csp);
      await page.fill('#email', address);
      assert.equal((await submit(page, 'button[type=submit]')).status(), 202);
      await check(page, 'dead-ends-confirm-resent', csp);

      // A reset from the mail alone (no page to return to): a wrong code, then the right one, then on.
      await page.goto(`${base}/auth/forgot-password`);
      await page.fill('#email', address);
      assert.equal((await submit(page, 'button[type=submit]')).status(), 202);
      assert.equal((await focused(page)).id, 'code');
      await page.fill('#code', '000000');
      await page.fill('#password', 'the newest password');
      const code = /code is (\d{6})/.exec(await lastMail(address, 'password_recovery'))![1];
      if (code !== '000000') {
        assert.equal((await submit(page, 'button[type=submit]')).status(), 410);
        assert.equal(await page.inputValue('#code'), '000000');
        assert.match(
          await page.locator('[role=alert]').innerText(),
          /Check the six digits in the newest mail and try again/,
        );
        await check(page, 'dead-ends-reset-wrong-code', csp);
      }
      await page.fill('#code', code);
      await page.fill('#password', 'the newest password');
      assert.equal((await submit(page, 'button[type=submit]')).status(), 200);
      assert.deepEqual(await nextSteps(page), [
        ['/account', 'Sign in to your account'],
        ['/', 'Go to the home page'],
      ]);
      await check(page, 'dead-ends-password-changed', csp);

      // A sign-in link opened with no request waiting, then opened again.
      await t.inject({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email: address } });
      const magic = pathOfLink(await lastMail(address, 'magic_link'), '/auth/magic?token=');
      await page.goto(magic);
      await Promise.all([page.waitForSelector('text=You are signed in'), page.click('button[type=submit]')]);
      assert.match(await page.locator('main').innerText(), /This browser is now signed in to Northwind Cloud\./);
      assert.deepEqual(await nextSteps(page), [
        ['/account', 'Go to your account'],
        ['/', 'Go to the home page'],
      ]);
      await check(page, 'dead-ends-magic-signed-in', csp);
      await page.goto(magic);
      assert.equal((await submit(page, 'button[type=submit]')).status(), 400);
      assert.equal(await page.locator('h1').innerText(), 'This sign-in link cannot be used');
      assert.deepEqual(await nextSteps(page), [
        ['/account', 'Sign in'],
        ['/', 'Go to the home page'],
      ]);
      await check(page, 'dead-ends-magic-used', csp);

      for (const [name, query] of [
        ['bare', ''],
        ['link', '?connector=mail&instanceId=x&action=link'],
        ['error', '?connector=mail&status=error&reason=state_expired'],
      ] as const) {
        await page.goto(`${base}/settings/connectors${query}`);
        assert.doesNotMatch(await page.locator('main').innerText(), /POST|\/api\//, name);
        assert.deepEqual(await nextSteps(page), [['/', 'Go to the home page']], name);
        await check(page, `dead-ends-connector-${name}`, csp);
      }
    });
  });

  it('a user in no workspace, an unknown client, the 429 page: what to do, in words', async () => {
    const setup = await mcpSetup(t);
    const loner = await makeUser(t.app);
    await withPage(async (page, csp) => {
      await page.goto(`${base}${mcpAuthorizeUrl(setup.client.clientId, pkcePair().challenge)}`);
      await page.fill('#email', loner.email);
      await page.fill('#password', loner.password);
      await Promise.all([page.waitForSelector('text=No workspace to share'), page.click('button[value=password]')]);
      assert.match(await page.locator('main').innerText(), /Ask the owner of an account to invite you/);
      await check(page, 'dead-ends-no-workspace', csp);
      const [back] = await Promise.all([
        page.waitForRequest((r) => r.url().startsWith('https://app.example/cb')),
        page.click('button[value=deny]'),
      ]);
      assert.equal(new URL(back.url()).searchParams.get('error'), 'access_denied');
      // The browser's navigation there fails (no such host): it must end before the next page's
      // navigation starts, or it interrupts it.
      await page.waitForURL((url) => !url.href.startsWith(base), { waitUntil: 'commit' }).catch(() => undefined);

      await page.goto(
        `${base}/api/v1/oauth/authorize?client_id=00000000-0000-4000-8000-000000000000&response_type=code`,
      );
      assert.match(await page.locator('main').innerText(), /For the developer: /);
      await check(page, 'dead-ends-unknown-client', csp);

      let status = 0;
      for (let i = 0; i < 25 && status !== 429; i++)
        status = (await page.goto(`${base}/auth/magic?token=x`))?.status() ?? 0;
      assert.equal(status, 429);
      assert.match(
        await page.locator('main').innerText(),
        /Too many attempts\. Wait \d+ (seconds?|minute), then try again\./,
      );
      assert.doesNotMatch(await page.locator('main').innerText(), /Retry-After/);
      await check(page, 'dead-ends-429', csp);
    });
  });

  it('an approval shows its times as <time> in words, who decided, and a title that follows the state', async () => {
    const setup = await gatedTool(t);
    try {
      const gate = await setup.gate({ target: '/srv/data', token: 'hidden' });
      if (gate.proceed) throw new Error('expected a pending approval');
      const owner = setup.team.owner.user;
      await withPage(async (page, csp) => {
        await page.goto(`${base}/approvals/${gate.approval.id}`);
        await page.fill('#email', owner.email);
        await page.fill('#password', owner.password);
        await Promise.all([page.waitForSelector('button[value=approve]'), page.click('button[type=submit]')]);
        const times = await page
          .locator('dl.details time')
          .evaluateAll((els) => els.map((e) => [e.getAttribute('datetime'), e.textContent]));
        assert.ok(times.length >= 2, JSON.stringify(times));
        for (const [iso, text] of times) {
          assert.match(String(iso), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
          assert.match(String(text), /^\d{1,2} [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC$/);
        }
        assert.match(await page.locator('dl.details').innerText(), /\(in \d+ minutes?\)/);
        assert.doesNotMatch(await page.locator('dl.details').innerText(), /\d{4}-\d\d-\d\dT/);
        await check(page, 'dead-ends-approval', csp);
        assert.equal((await submit(page, 'button[value=approve]')).status(), 303);
        await page.waitForSelector('#status[data-status=approved]');
        assert.equal(await page.locator('h1').innerText(), 'Tool call approved');
        assert.match(await page.locator('dl.details').innerText(), /Decided by\s+Test User, \d{1,2} [A-Z][a-z]+ \d{4}/);
        await check(page, 'dead-ends-approval-decided', csp);
      });
    } finally {
      await setup.fake.close();
    }
  });
});
