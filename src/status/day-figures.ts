import { escapeHtml } from '../http/html.js';
import type { DayBar, ServiceView } from './model.js';
import { dayText } from './labels.js';
import { incidentHref } from './page-parts.js';
import { pagePercent } from './uptime.js';

/**
 * A service's 90 days as a person can reach them without a mouse (docs/status.md, Pages): the
 * bar is a picture with one accessible name (its 90-day figure); each day's uptime and its
 * incidents are in a table inside a details element, one Tab stop that opens with the
 * keyboard, read in order by screen readers and shown to anyone who opens it. Runs of alike
 * days (the same figure, no incident) share a row, newest first, so the page stays light.
 */

/** A day's bar colour by its uptime: 100% green, >= 99% yellow, >= 95% orange, below red; no data grey. */
function dayClass(day: DayBar): string {
  if (day.uptime === null) return 'nodata';
  if (day.uptime >= 99.9999) return 'none';
  if (day.uptime >= 99) return 'minor';
  if (day.uptime >= 95) return 'major';
  return 'critical';
}

const figureOf = (day: DayBar): string => (day.uptime === null ? 'No data' : `${pagePercent(day.uptime / 100)}%`);

/** The bar itself: the per-day figure is in each day's tooltip for mouse users. */
export function uptimeBar(service: ServiceView): string {
  const spans = service.days
    .map(
      (d) =>
        `<span class="${dayClass(d)}" title="${d.date}: ${figureOf(d).toLowerCase()}${d.incidents.length > 0 ? `, ${d.incidents.length} incident${d.incidents.length > 1 ? 's' : ''}` : ''}"></span>`,
    )
    .join('');
  const percent = pagePercent(service.uptime['90d'].ratio);
  return `<div class="bar" role="img" aria-label="Uptime over the last 90 days: ${percent}%">${spans}</div>`;
}

interface Run {
  from: string;
  to: string;
  figure: string;
  days: DayBar[];
}

/** Consecutive days with the same figure and no incident, merged. */
function runs(days: readonly DayBar[]): Run[] {
  const out: Run[] = [];
  for (const day of days) {
    const figure = figureOf(day);
    const last = out[out.length - 1];
    if (last && day.incidents.length === 0 && last.days[0].incidents.length === 0 && last.figure === figure) {
      last.to = day.date;
      last.days.push(day);
    } else out.push({ from: day.date, to: day.date, figure, days: [day] });
  }
  return out;
}

export function dayFigures(service: ServiceView): string {
  const rows = runs(service.days)
    .reverse()
    .map((run) => {
      const when = run.from === run.to ? dayText(run.from) : `${dayText(run.from)} to ${dayText(run.to)}`;
      const incidents = run.days[0].incidents;
      const listed =
        incidents.length === 0
          ? 'None'
          : incidents
              .map((i) => `<a href="${incidentHref(escapeHtml(i.row.id))}">${escapeHtml(i.row.title)}</a>`)
              .join(', ');
      return `<tr><th scope="row">${when}</th><td>${run.figure}</td><td>${listed}</td></tr>`;
    })
    .join('\n');
  const name = escapeHtml(service.row.name);
  return `<details class="days"><summary>Daily figures: ${name}</summary>
<table><caption>Uptime and incidents of ${name} by day, newest first</caption>
<thead><tr><th scope="col">Day</th><th scope="col">Uptime</th><th scope="col">Incidents</th></tr></thead>
<tbody>
${rows}
</tbody></table></details>`;
}
