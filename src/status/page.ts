import { headlineOf, indicatorOf, type ComponentStatus } from './rules.js';
import type { DayBar, StatusModel } from './model.js';
import { pagePercent } from './uptime.js';
import { escapeHtml } from '../http/html.js';
import type { PageKit } from '../http/page-kit.js';

/** The human status page (docs/interface.md, Addresses: GET /status): server-rendered, no script, phone-first. */

const LABEL: Record<ComponentStatus, string> = {
  operational: 'Operational',
  degraded_performance: 'Degraded performance',
  partial_outage: 'Partial outage',
  major_outage: 'Major outage',
  maintenance: 'Under maintenance',
};

/** A day's bar colour by its uptime: 100% green, >= 99% yellow, >= 95% orange, below red; no data grey. */
function dayClass(day: DayBar): string {
  if (day.uptime === null) return 'nodata';
  if (day.uptime >= 99.9999) return 'none';
  if (day.uptime >= 99) return 'minor';
  if (day.uptime >= 95) return 'major';
  return 'critical';
}

const when = (iso: string): string =>
  `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.slice(0, 16).replace('T', ' '))} UTC</time>`;

export function renderStatusPage(model: StatusModel, kit: PageKit, feedUrl: string, jsonUrl: string): string {
  const indicator = indicatorOf(model.status);
  const active = model.incidents.filter((i) => i.active);
  const services = model.services
    .map((s) => {
      const ind = indicatorOf(s.status);
      const components = s.components
        .map(
          (c) =>
            `<li><span>${escapeHtml(c.row.name)}</span><span class="st ${indicatorOf(c.status)}">${LABEL[c.status]}</span></li>`,
        )
        .join('');
      const bar = s.days
        .map(
          (d) =>
            `<span class="${dayClass(d)}" title="${d.date}: ${d.uptime === null ? 'no data' : `${pagePercent(d.uptime / 100)}%`}"></span>`,
        )
        .join('');
      return `<section class="card service" data-slug="${escapeHtml(s.row.slug)}"><div class="row"><span class="svc">${escapeHtml(s.row.name)}</span><span class="st ${ind}">${LABEL[s.status]}</span></div>
${s.row.description ? `<p class="muted">${escapeHtml(s.row.description)}</p>` : ''}${components ? `<ul class="components">${components}</ul>` : ''}
<div class="bar" role="img" aria-label="Uptime over the last 90 days: ${pagePercent(s.uptime['90d'].ratio)}%">${bar}</div>
<div class="legend"><span>90 days ago</span><span>${pagePercent(s.uptime['90d'].ratio)}% uptime</span><span>Today</span></div></section>`;
    })
    .join('\n');
  const incidents = active
    .map((i) => {
      const latest = i.updates[i.updates.length - 1];
      return `<article class="card incident"><div class="row"><strong>${escapeHtml(i.row.title)}</strong><span class="st ${i.row.impact === 'major' ? 'critical' : i.row.impact === 'partial' ? 'major' : 'minor'}">${escapeHtml(i.row.status)}</span></div>
${latest ? `<p><strong>${escapeHtml(latest.status)}</strong> - ${escapeHtml(latest.message)}</p><p class="muted">Posted ${when(latest.created_at)}</p>` : ''}</article>`;
    })
    .join('\n');
  const maintenance = model.maintenance
    .map((m) => {
      const service = model.services.find((s) => s.row.id === m.service_id);
      return `<article class="card maintenance"><div class="row"><strong>${escapeHtml(m.title)}</strong><span class="st maintenance">${m.status === 'in_progress' ? 'In progress' : 'Scheduled'}</span></div>
<p class="muted">${service ? `${escapeHtml(service.row.name)}: ` : ''}${when(m.starts_at)} to ${when(m.ends_at)}</p></article>`;
    })
    .join('\n');
  const headline = headlineOf(model.status);
  return kit.document({
    title: `Status: ${headline}`,
    wide: true,
    head: `<link rel="alternate" type="application/atom+xml" title="Incidents" href="${escapeHtml(feedUrl)}">`,
    body: `<h1>${escapeHtml(kit.brand.name)} status</h1>
<div class="banner ${indicator}" id="headline">${escapeHtml(headline)}</div>
${active.length > 0 ? `<h2>Active incidents</h2>\n${incidents}` : ''}
${model.maintenance.length > 0 ? `<h2>Scheduled maintenance</h2>\n${maintenance}` : ''}
<h2>Services</h2>
${services || '<p class="muted">No services are published yet.</p>'}
<footer>Last updated ${when(model.updatedAt)}. <a href="${escapeHtml(feedUrl)}">Incident feed (Atom)</a> · <a href="${escapeHtml(jsonUrl)}">JSON</a></footer>`,
  });
}
