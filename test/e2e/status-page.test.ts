/// <reference lib="dom" />
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';

describe('the human status page in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let url: string;

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
      serviceSlugs: ['api'],
    });
    await s.updateIncident(incident.id, { status: 'identified', message: 'A bad deploy; rolling back' });
    const soon = Date.now() + 86_400_000;
    await s.createMaintenance({
      title: 'Database upgrade',
      serviceSlug: 'dash',
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

  it('shows the headline, services with components and 90-day bars, the incident and the maintenance', async () => {
    const page = await browser.newPage({ viewport: { width: 1024, height: 900 } });
    const res = await page.goto(url);
    assert.equal(res?.status(), 200);
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
    assert.match(await incident.innerText(), /Elevated API errors/);
    assert.match(await incident.innerText(), /identified - A bad deploy; rolling back/);
    assert.doesNotMatch(await incident.innerText(), /investigating </, 'only the latest update');
    assert.match(await page.locator('article.maintenance').innerText(), /Database upgrade/);
    assert.match(await page.locator('article.maintenance').innerText(), /Dashboard:/);
    const banner = await page.locator('#headline').evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.equal(banner, 'rgb(194, 65, 12)');
    // Uptime with two decimals, cut: about 70% weighted today.
    assert.match(await api.locator('.legend').innerText(), /\b\d{2}\.\d{2}% uptime\b/);
    assert.equal(await page.locator('link[rel="alternate"][type="application/atom+xml"]').count(), 1);
    await page.close();
  });

  it('is readable on a phone: no sideways scrolling, text at a readable size', async () => {
    const page = await browser.newPage({
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
    const incidents = await t.app.services.status.listIncidents();
    await t.app.services.status.updateIncident(incidents[0].id, { status: 'resolved', message: 'Fixed' });
    const page = await browser.newPage();
    await page.goto(url);
    assert.equal((await page.locator('#headline').innerText()).trim(), 'All Systems Operational');
    assert.equal(await page.locator('article.incident').count(), 0);
    await page.close();
  });
});
