import { headlineOf, indicatorOf, type ComponentStatus } from './rules.js';
import type { DayBar, StatusModel } from './model.js';
import { toPercent } from './uptime.js';
import { escapeHtml } from '../http/html.js';

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

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2933;background:#f5f7fa}
main{max-width:860px;margin:0 auto;padding:16px}h1{font-size:1.5rem;margin:8px 0 16px}h2{font-size:1.15rem;margin:24px 0 8px}
.banner{border-radius:8px;padding:16px;color:#fff;font-weight:600;font-size:1.2rem}
.banner.none{background:#2f9e44}.banner.minor{background:#e0a800;color:#1f2933}.banner.major{background:#e8590c}.banner.critical{background:#c92a2a}.banner.maintenance{background:#1971c2}
.card{background:#fff;border:1px solid #d9e2ec;border-radius:8px;padding:12px 16px;margin:12px 0}
.row{display:flex;justify-content:space-between;gap:8px;flex-wrap:wrap}.svc{font-weight:600}
.st{font-size:.9rem;font-weight:600}.st.none{color:#2f9e44}.st.minor{color:#b08800}.st.major{color:#e8590c}.st.critical{color:#c92a2a}.st.maintenance{color:#1971c2}
ul.components{list-style:none;padding:0;margin:8px 0}ul.components li{display:flex;justify-content:space-between;gap:8px;padding:4px 0;border-top:1px solid #f0f4f8;font-size:.95rem}
.bar{display:flex;gap:1px;height:28px;margin-top:8px}.bar span{flex:1;border-radius:1px;min-width:1px}
.bar .none{background:#2f9e44}.bar .minor{background:#e0a800}.bar .major{background:#e8590c}.bar .critical{background:#c92a2a}.bar .nodata{background:#d9e2ec}
.legend{display:flex;justify-content:space-between;font-size:.8rem;color:#627d98}
.muted{color:#627d98;font-size:.9rem}footer{margin:32px 0 16px;font-size:.85rem;color:#627d98}a{color:#1971c2}
`;

export function renderStatusPage(model: StatusModel, feedUrl: string, jsonUrl: string): string {
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
            `<span class="${dayClass(d)}" title="${d.date}: ${d.uptime === null ? 'no data' : `${toPercent(d.uptime / 100)}%`}"></span>`,
        )
        .join('');
      return `<section class="card service" data-slug="${escapeHtml(s.row.slug)}"><div class="row"><span class="svc">${escapeHtml(s.row.name)}</span><span class="st ${ind}">${LABEL[s.status]}</span></div>
${s.row.description ? `<p class="muted">${escapeHtml(s.row.description)}</p>` : ''}${components ? `<ul class="components">${components}</ul>` : ''}
<div class="bar" role="img" aria-label="Uptime over the last 90 days: ${toPercent(s.uptime['90d'].ratio)}%">${bar}</div>
<div class="legend"><span>90 days ago</span><span>${toPercent(s.uptime['90d'].ratio)}% uptime</span><span>Today</span></div></section>`;
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
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Status: ${escapeHtml(headlineOf(model.status))}</title>
<link rel="alternate" type="application/atom+xml" title="Incidents" href="${escapeHtml(feedUrl)}">
<style>${STYLE}</style></head>
<body><main>
<h1>System status</h1>
<div class="banner ${indicator}" id="headline">${escapeHtml(headlineOf(model.status))}</div>
${active.length > 0 ? `<h2>Active incidents</h2>\n${incidents}` : ''}
${model.maintenance.length > 0 ? `<h2>Scheduled maintenance</h2>\n${maintenance}` : ''}
<h2>Services</h2>
${services || '<p class="muted">No services are published yet.</p>'}
<footer>Last updated ${when(model.updatedAt)}. <a href="${escapeHtml(feedUrl)}">Incident feed (Atom)</a> · <a href="${escapeHtml(jsonUrl)}">JSON</a></footer>
</main></body></html>
`;
}
