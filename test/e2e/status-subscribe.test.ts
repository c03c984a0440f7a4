/// <reference lib="dom" />
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { pageChecker, watchCsp } from '../helpers/page-checks.js';
import { fakeSmtp, headerOf, textOf, type Received } from '../helpers/smtp-sink.js';
import { verifySignature, webhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Subscribing as a person does it (docs/status.md, Subscriptions): from the status page to the
 * form, the mail over SMTP, the confirmation, the notice of an incident and its one-click
 * unsubscribe; and a webhook added from the form. Every state is checked by axe-core and kept
 * as a screenshot (test-results/pages/).
 */
describe('subscribing to the status page in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const smtp = fakeSmtp();
  const hooks = webhookReceiver();
  const check = pageChecker();

  before(async () => {
    const port = await smtp.listen();
    await hooks.listen();
    t = await createTestApp({
      env: {
        GANTRY_SMTP_URL: `smtp://127.0.0.1:${port}`,
        GANTRY_ALLOW_PRIVATE_NETWORKS: 'true',
        GANTRY_BRAND_NAME: 'Northwind Cloud',
      },
    });
    const s = t.app.services.status;
    await s.createService({ slug: 'api', name: 'Public API', sortOrder: 1 });
    await s.createService({ slug: 'dash', name: 'Dashboard', sortOrder: 2 });
    await s.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST endpoints' });
    await s.createComponent({ serviceSlug: 'api', slug: 'api-hooks', name: 'Webhooks' });
    await s.createComponent({ serviceSlug: 'dash', slug: 'dash-ui', name: 'Web UI' });
    await t.server.start();
    base = t.server.info.uri;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await smtp.close();
    await hooks.close();
  });

  async function open(context: BrowserContext, path: string): Promise<{ page: Page; csp: string[]; status?: number }> {
    const page = await context.newPage();
    const csp = watchCsp(page);
    const res = await page.goto(`${base}${path}`);
    return { page, csp, status: res?.status() };
  }

  /** The mail to `to` matching `subject`, once the server has sent it (delivery starts after the commit). */
  async function mailTo(to: string, subject: RegExp): Promise<Received> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const found = smtp.received.find(
        (m) => m.to.some((r) => r.includes(to)) && subject.test(headerOf(m, 'Subject') ?? ''),
      );
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject}`);
      await t.app.kernel.mailer.deliverPending();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const linkTo = (text: string, path: string) =>
    (text.match(/https?:\/\/\S+/g) ?? []).map((u) => new URL(u)).find((u) => u.pathname === path) as URL;

  it('from the status page to a confirmed address, then a notice and its one-click unsubscribe', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    try {
      const { page, csp } = await open(context, '/status');
      await page.getByRole('link', { name: 'Subscribe to updates' }).click();
      await page.waitForURL(`${base}/status/subscribe`);
      assert.equal(await page.locator('h1').innerText(), 'Subscribe to Northwind Cloud status updates');
      await check(page, 'status-subscribe', csp);
      const email = 'reader@example.com';
      await page.getByLabel('Email address').fill(email);
      await page.locator('summary', { hasText: 'Only some components' }).click();
      await page.getByLabel('REST endpoints').check();
      await page.getByRole('button', { name: 'Subscribe by email' }).click();
      await page.waitForURL(`${base}/status/subscribe/sent`);
      assert.equal(await page.locator('h1').innerText(), 'Check your inbox');
      await check(page, 'status-subscribe-sent', csp);

      const confirmation = await mailTo(email, /^Confirm your subscription to Northwind Cloud status updates$/);
      assert.equal(headerOf(confirmation, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
      const confirmUrl = linkTo(textOf(confirmation), '/status/subscriptions/confirm');
      await page.goto(`${base}${confirmUrl.pathname}${confirmUrl.search}`);
      await check(page, 'status-confirm', csp);
      await page.getByRole('button', { name: 'Confirm the subscription' }).click();
      await page.waitForURL(`${base}/status/subscriptions/confirmed`);
      assert.equal(await page.locator('h1').innerText(), 'You are subscribed');
      await check(page, 'status-confirmed', csp);
      const used = await page.goto(`${base}${confirmUrl.pathname}${confirmUrl.search}`);
      assert.equal(used?.status(), 200, 'the link page only shows the button');
      await page.getByRole('button', { name: 'Confirm the subscription' }).click();
      assert.match(await page.locator('main').innerText(), /invalid, already used or expired/);
      await check(page, 'status-confirm-used', csp);

      await t.app.services.status.createIncident({
        title: 'Elevated API errors',
        impact: 'partial',
        message: 'We are investigating',
        componentSlugs: ['api-rest'],
      });
      const notice = await mailTo(email, /New incident: Elevated API errors/);
      const unsubscribeHeader = String(headerOf(notice, 'List-Unsubscribe'));
      const unsubscribeUrl = linkTo(textOf(notice), '/status/unsubscribe');
      assert.equal(unsubscribeHeader, `<${unsubscribeUrl.href}>`);
      await page.goto(`${base}${unsubscribeUrl.pathname}${unsubscribeUrl.search}`);
      await check(page, 'status-unsubscribe', csp);
      await page.getByRole('button', { name: 'Unsubscribe' }).click();
      await page.waitForURL(`${base}/status/unsubscribed`);
      assert.equal(await page.locator('h1').innerText(), 'You are unsubscribed');
      await check(page, 'status-unsubscribed', csp);
      assert.equal(
        await t.app.kernel.db
          .selectFrom('status_subscriptions')
          .selectAll()
          .where('email', '=', email)
          .executeTakeFirst(),
        undefined,
      );
    } finally {
      await context.close();
    }
  });

  it('a webhook from the form: its secret shown once, and deliveries it can verify', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    try {
      const { page, csp } = await open(context, '/status/subscribe');
      await page.locator('summary', { hasText: 'Or subscribe a webhook' }).click();
      await page.getByLabel('Webhook URL').fill('ftp://files.example.com/hook');
      await page.getByRole('button', { name: 'Add the webhook' }).click();
      assert.equal(await page.getByRole('alert').count(), 1);
      assert.equal(await page.getByLabel('Webhook URL').getAttribute('aria-invalid'), 'true');
      await check(page, 'status-subscribe-error', csp);
      await page.getByLabel('Webhook URL').fill(hooks.url('/from-the-form'));
      await page.getByRole('button', { name: 'Add the webhook' }).click();
      assert.equal(await page.locator('h1').innerText(), 'Webhook added');
      const secret = (await page.locator('#secret').innerText()).trim();
      assert.match(secret, /^whsec_/);
      await check(page, 'status-webhook-added', csp);
      await t.app.services.status.createIncident({ title: 'Dashboard slow', impact: 'minor', message: 'Looking' });
      const deadline = Date.now() + 10_000;
      while (hooks.at('/from-the-form').length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const [hook] = hooks.at('/from-the-form');
      assert.ok(hook, 'the webhook was called');
      assert.equal(verifySignature(hook, secret, Date.now()), true);
      assert.equal(JSON.parse(hook.body).incident.title, 'Dashboard slow');
    } finally {
      await context.close();
    }
  });

  it('the form on a phone: no sideways scrolling, targets large enough', async () => {
    const context = await browser.newContext({
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    try {
      const { page, csp } = await open(context, '/status/subscribe');
      await page.locator('summary', { hasText: 'Only some components' }).click();
      const { scrollWidth, clientWidth } = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
      }));
      assert.ok(scrollWidth <= clientWidth, `page is ${scrollWidth}px wide`);
      const box = await page.getByLabel('REST endpoints').boundingBox();
      assert.ok(box && box.height >= 20 && box.width >= 20);
      await check(page, 'status-subscribe-phone', csp);
    } finally {
      await context.close();
    }
  });
});
