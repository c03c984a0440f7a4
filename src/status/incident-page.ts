import { escapeHtml } from '../http/html.js';
import type { PageKit } from '../http/page-kit.js';
import type { IncidentView, StatusModel } from './model.js';
import { dayText, durationText, incidentLabel } from './labels.js';
import { affectedText, byDay, impactChip, incidentListItem, lasted, stamp, timeline } from './page-parts.js';
import { HISTORY_PAGE, SUBSCRIBE_PAGE } from './page.js';

/**
 * An incident's own page and the incident history (docs/status.md, Pages): cached like the
 * status page, and computed at the projection's as-of time (an open incident's duration runs
 * to it).
 */

/** Incidents per history page. */
const HISTORY_PAGE_SIZE = 25;

export function renderIncidentPage(model: StatusModel, incident: IncidentView, kit: PageKit): string {
  const row = incident.row;
  const { ms, open } = lasted(model, incident);
  return kit.document({
    title: row.title,
    body: `<p><a href="/status">${escapeHtml(kit.brand.name)} status</a></p>
<h1>${escapeHtml(row.title)}</h1>
<p>${impactChip(row.impact)} · <strong>${escapeHtml(incidentLabel(row.status))}</strong></p>
<dl class="details">
<dt>Affected</dt><dd>${escapeHtml(affectedText(model, incident))}</dd>
<dt>Started</dt><dd>${stamp(row.started_at)}</dd>
${open ? '' : `<dt>Resolved</dt><dd>${stamp(row.resolved_at as string)}</dd>\n`}<dt>Duration</dt><dd>${open ? `Ongoing for ${durationText(ms)}` : durationText(ms)}</dd>
</dl>
<h2>Updates</h2>
${timeline(incident.updates)}
<p class="actions"><a class="btn btn-secondary" href="${SUBSCRIBE_PAGE}">Subscribe to updates</a></p>`,
  });
}

/** Page `page` (from 1) of every incident, newest first; null past the last page (page 1 always exists). */
export function renderHistoryPage(model: StatusModel, page: number, kit: PageKit): string | null {
  const pages = Math.max(1, Math.ceil(model.incidents.length / HISTORY_PAGE_SIZE));
  if (page > pages) return null;
  const shown = model.incidents.slice((page - 1) * HISTORY_PAGE_SIZE, page * HISTORY_PAGE_SIZE);
  const days = [...byDay(shown)]
    .map(
      ([date, incidents]) =>
        `<section class="day"><h2>${dayText(date)}</h2>\n<ul class="incidents">${incidents.map((i) => incidentListItem(model, i)).join('\n')}</ul></section>`,
    )
    .join('\n');
  const links = [
    page > 1
      ? `<a class="btn btn-secondary" rel="prev" href="${HISTORY_PAGE}?page=${page - 1}">Newer incidents</a>`
      : '',
    page < pages
      ? `<a class="btn btn-secondary" rel="next" href="${HISTORY_PAGE}?page=${page + 1}">Older incidents</a>`
      : '',
  ].join('');
  return kit.document({
    title: page === 1 ? 'Incident history' : `Incident history, page ${page}`,
    wide: true,
    body: `<p><a href="/status">${escapeHtml(kit.brand.name)} status</a></p>
<h1>Incident history${page > 1 ? `, page ${page} of ${pages}` : ''}</h1>
${days || '<p class="muted">No incidents reported.</p>'}
${links ? `<nav class="actions" aria-label="More incidents">${links}</nav>` : ''}`,
  });
}
