/// <reference lib="dom" />
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { pageChecker, watchCsp } from '../helpers/page-checks.js';

describe('the human status page in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let url: string;
  let incidentId: string;
  const check = pageChecker();

  before(async () => {
    t = await createTestApp();
    const s = t.app.services.status;
    await s.createService({ slug: 'api', name: 'Public API', sortOrder: 1 });
    await s.createService({ slug: 'dash', name: 'Dashboard', sortOrder: 2, description: 'The web dashboard' });
    await s.createService({ slug: 'secret', name: 'Secret backend', isPublic: false });
    await s.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST endpoints' });
    await s.createComponent({ serviceSlug: 'dash', slug: 'dash-ui', name: 'Web UI' });
    await s.setComponentStatus('api-rest', 'partial_outage');
    const incident = await s.createIncident({
      title: 'Elevated API errors',
      impact: 'partial',
      message: 'We are investigating <errors>',
      componentSlugs: ['api-rest'],
    });
    incidentId = incident.id;
    await s.updateIncident(incident.id, { status: 'identified', message: 'A bad deploy; rolling back' });
    const earlier = await s.createIncident({ title: 'Dashboard slow', impact: 'minor', message: 'Slow pages' });
    await s.updateIncident(earlier.id, { status: 'resolved', message: 'Back to normal' });
    const soon = Date.now() + 86_400_000;
    await s.createMaintenance({
      title: 'Database upgrade',
      serviceSlug: 'dash',
      description: 'The dashboard is read-only for up to 90 minutes.',
      startsAt: new Date(soon).toISOString(),
      endsAt: new Date(soon + 3_600_000).toISOString(),
    });
    await t.server.start();
    url = `${t.server.info.uri}/status`;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(path: string, options: Parameters<Browser['newPage']>[0] = {}) {
    const page = await browser.newPage({ viewport: { width: 1024, height: 900 }, ...options });
    const csp = watchCsp(page);
    const res = await page.goto(`${t.server.info.uri}${path}`);
    return { page, csp, status: res?.status() };
  }

  it('shows the headline, services with bars, every update of the active incident, the maintenance, the past incidents', async () => {
    const { page, csp, status } = await open('/status');
    assert.equal(status, 200);
    assert.equal(await page.title(), 'Status: Partial System Outage · Gantry');
    assert.equal((await page.locator('#headline').innerText()).trim(), 'Partial System Outage');
    const services = page.locator('section.service');
    assert.equal(await services.count(), 2);
    assert.deepEqual(await services.locator('.svc').allInnerTexts(), ['Public API', 'Dashboard']);
    assert.doesNotMatch(await page.locator('body').innerText(), /Secret backend/);
    const api = page.locator('section.service[data-slug="api"]');
    assert.match(await api.innerText(), /REST endpoints\s+Partial outage/);
    assert.equal(await api.locator('.bar span').count(), 90);
    // Today: partial outage since creation, about 70% weighted uptime: below 95%, red.
    assert.equal(await api.locator('.bar span').last().getAttribute('class'), 'critical');
    assert.equal(await api.locator('.bar span').first().getAttribute('class'), 'nodata');
    const incident = page.locator('article.incident');
    assert.equal(await incident.count(), 1);
    const text = await incident.innerText();
    assert.match(text, /Elevated API errors/);
    assert.match(text, /Affects: Public API \(REST endpoints\)/);
    assert.match(text, /Identified - A bad deploy; rolling back/);
    assert.match(text, /Investigating - We are investigating <errors>/, 'every update, not only the latest');
    const maintenance = await page.locator('article.maintenance').innerText();
    assert.match(maintenance, /Database upgrade/);
    assert.match(maintenance, /The dashboard is read-only for up to 90 minutes\./);
    assert.match(maintenance, /Dashboard: .* UTC to .* UTC \(1 h\)/);
    const past = await page.locator('section.day').first().innerText();
    assert.match(past, /Dashboard slow\s+Minor\s+Resolved \d.* UTC · lasted less than a minute/);
    assert.equal(await page.locator('section.day').count(), 14);
    const banner = await page.locator('#headline').evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.equal(banner, 'rgb(194, 65, 12)');
    // Uptime with two decimals, cut: about 70% weighted today.
    assert.match(await api.locator('.legend').innerText(), /\b\d{2}\.\d{2}% uptime\b/);
    assert.equal(await page.locator('link[rel="alternate"][type="application/atom+xml"]').count(), 1);
    await check(page, 'status-history', csp);
    await page.close();
  });

  it("the bars' day figures are reached by keyboard and named for screen readers", async () => {
    const { page, csp } = await open('/status');
    // Tab until the first service's figures are focused: a real Tab stop, not a tooltip.
    let focused = '';
    for (let i = 0; i < 40 && focused !== 'Daily figures: Public API'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => (document.activeElement?.textContent ?? '').trim());
    }
    assert.equal(focused, 'Daily figures: Public API');
    const details = page.locator('section.service[data-slug="api"] details.days');
    assert.equal(await details.evaluate((el) => (el as HTMLDetailsElement).open), false);
    await page.keyboard.press('Enter');
    assert.equal(await details.evaluate((el) => (el as HTMLDetailsElement).open), true);
    const today = details.locator('tbody tr').first();
    assert.match(await today.locator('th').innerText(), /^\d{1,2} [A-Z][a-z]{2} \d{4}$/);
    assert.match(await today.locator('td').nth(0).innerText(), /^\d{2}\.\d{2}%$/);
    assert.equal(await today.locator('td a').innerText(), 'Elevated API errors');
    // The accessibility tree names the table's cells by their headers.
    const snapshot = await page.locator('section.service[data-slug="api"] table').ariaSnapshot();
    assert.match(snapshot, /columnheader "Uptime"/);
    assert.match(snapshot, /rowheader "\d{1,2} [A-Z][a-z]{2} \d{4}"/);
    await check(page, 'status-day-figures', csp);
    await page.close();
  });

  it("an incident's page and the history, checked like every page", async () => {
    const incident = await open(`/status/incidents/${incidentId}`);
    assert.equal(incident.status, 200);
    assert.equal(await incident.page.locator('h1').innerText(), 'Elevated API errors');
    assert.deepEqual(
      (await incident.page.locator('ol.timeline li strong').allInnerTexts()).map((s) => s.trim()),
      ['Identified', 'Investigating'],
    );
    assert.match(await incident.page.locator('dl.details').innerText(), /Affected\s+Public API \(REST endpoints\)/);
    assert.match(await incident.page.locator('dl.details').innerText(), /Duration\s+Ongoing for/);
    await check(incident.page, 'status-incident', incident.csp);
    await incident.page.close();
    const phone = await open(`/status/incidents/${incidentId}`, {
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    await check(phone.page, 'status-incident-phone', phone.csp);
    await phone.page.close();
    const history = await open('/status/history');
    assert.equal(history.status, 200);
    assert.deepEqual(await history.page.locator('ul.incidents a').allInnerTexts(), [
      'Dashboard slow',
      'Elevated API errors',
    ]);
    await check(history.page, 'status-history-page', history.csp);
    await history.page.close();
  });

  it('is readable on a phone: no sideways scrolling, text at a readable size', async () => {
    const page: Page = await browser.newPage({
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    await page.goto(url);
    const { scrollWidth, clientWidth, fontSize, barWidth } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      fontSize: parseFloat(getComputedStyle(document.body).fontSize),
      barWidth: (document.querySelector('.bar') as HTMLElement).getBoundingClientRect().width,
    }));
    assert.equal(clientWidth, 360, 'the viewport meta tag is honoured');
    assert.ok(scrollWidth <= clientWidth, `page is ${scrollWidth}px wide`);
    assert.ok(fontSize >= 16);
    assert.ok(barWidth <= 360 && barWidth > 250);
    await page.close();
  });

  it('follows a change after a reload', async () => {
    await t.app.services.status.setComponentStatus('api-rest', 'operational');
    await t.app.services.status.updateIncident(incidentId, { status: 'resolved', message: 'Fixed' });
    const page = await browser.newPage();
    await page.goto(url);
    assert.equal((await page.locator('#headline').innerText()).trim(), 'All Systems Operational');
    assert.equal(await page.locator('article.incident').count(), 0);
    assert.match(await page.locator('section.day').first().innerText(), /Elevated API errors/);
    await page.close();
  });
});
