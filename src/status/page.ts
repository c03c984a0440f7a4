import { headlineOf, indicatorOf } from './rules.js';
import type { StatusModel } from './model.js';
import { pagePercent } from './uptime.js';
import { escapeHtml } from '../http/html.js';
import type { PageKit } from '../http/page-kit.js';
import { COMPONENT_LABEL, dayText } from './labels.js';
import { dayFigures, uptimeBar } from './day-figures.js';
import { activeIncidentCard, byDay, incidentListItem, maintenanceCard, stamp } from './page-parts.js';

/**
 * The human status page (docs/status.md, Pages: GET /status): server-rendered, no script,
 * phone-first. One page for everyone (it is cached like every status answer), so it carries no
 * form of its own: subscribing is a page of its own (/status/subscribe), whose form is bound to
 * the reader's browser.
 */

/** Past incidents: the last 14 days, today included (Statuspage shows about as many). */
const PAST_DAYS = 14;
const DAY = 86_400_000;
export const SUBSCRIBE_PAGE = '/status/subscribe';
export const HISTORY_PAGE = '/status/history';

function pastIncidents(model: StatusModel): string {
  const days = byDay(model.incidents);
  const today = Date.UTC(model.at.getUTCFullYear(), model.at.getUTCMonth(), model.at.getUTCDate());
  const sections: string[] = [];
  for (let d = 0; d < PAST_DAYS; d++) {
    const date = new Date(today - d * DAY).toISOString().slice(0, 10);
    const incidents = days.get(date) ?? [];
    sections.push(
      `<section class="day"><h3>${dayText(date)}</h3>\n${
        incidents.length > 0
          ? `<ul class="incidents">${incidents.map((i) => incidentListItem(model, i)).join('\n')}</ul>`
          : '<p class="muted">No incidents reported.</p>'
      }</section>`,
    );
  }
  return sections.join('\n');
}

export function renderStatusPage(model: StatusModel, kit: PageKit, feedUrl: string, jsonUrl: string): string {
  const indicator = indicatorOf(model.status);
  const active = model.incidents.filter((i) => i.active);
  const services = model.services
    .map((s) => {
      const ind = indicatorOf(s.status);
      const components = s.components
        .map(
          (c) =>
            `<li><span>${escapeHtml(c.row.name)}</span><span class="st ${indicatorOf(c.status)}">${COMPONENT_LABEL[c.status]}</span></li>`,
        )
        .join('');
      return `<section class="card service" data-slug="${escapeHtml(s.row.slug)}"><div class="row"><h3 class="svc">${escapeHtml(s.row.name)}</h3><span class="st ${ind}">${COMPONENT_LABEL[s.status]}</span></div>
${s.row.description ? `<p class="muted">${escapeHtml(s.row.description)}</p>` : ''}${components ? `<ul class="components">${components}</ul>` : ''}
${uptimeBar(s)}
<div class="legend"><span>90 days ago</span><span>${pagePercent(s.uptime['90d'].ratio)}% uptime</span><span>Today</span></div>
${dayFigures(s)}</section>`;
    })
    .join('\n');
  const inProgress = model.maintenance.filter((m) => m.status === 'in_progress');
  const scheduled = model.maintenance.filter((m) => m.status === 'scheduled');
  const headline = headlineOf(model.status);
  return kit.document({
    title: `Status: ${headline}`,
    wide: true,
    head: `<link rel="alternate" type="application/atom+xml" title="Incidents" href="${escapeHtml(feedUrl)}">`,
    body: `<h1>${escapeHtml(kit.brand.name)} status</h1>
<div class="banner ${indicator}" id="headline">${escapeHtml(headline)}</div>
<p class="actions"><a class="btn btn-primary" href="${SUBSCRIBE_PAGE}">Subscribe to updates</a><a class="btn btn-secondary" href="${escapeHtml(feedUrl)}">Atom feed</a></p>
${active.length > 0 ? `<h2>Active incidents</h2>\n${active.map((i) => activeIncidentCard(model, i)).join('\n')}` : ''}
${inProgress.length > 0 ? `<h2>Maintenance in progress</h2>\n${inProgress.map((m) => maintenanceCard(model, m)).join('\n')}` : ''}
${scheduled.length > 0 ? `<h2>Scheduled maintenance</h2>\n${scheduled.map((m) => maintenanceCard(model, m)).join('\n')}` : ''}
<h2>Services</h2>
${services || '<p class="muted">No services are published yet.</p>'}
<h2>Past incidents</h2>
${pastIncidents(model)}
<p><a href="${HISTORY_PAGE}">Incident history</a></p>
<footer>Last updated ${stamp(model.updatedAt)}. <a href="${escapeHtml(feedUrl)}">Incident feed (Atom)</a> · <a href="${escapeHtml(jsonUrl)}">JSON</a></footer>`,
  });
}
