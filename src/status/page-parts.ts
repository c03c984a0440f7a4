import { escapeHtml } from '../http/html.js';
import type { MaintenanceRow } from './store.js';
import type { IncidentView, StatusModel } from './model.js';
import { durationText, impactIndicator, impactLabel, incidentLabel, timeText } from './labels.js';
import type { UpdateRow } from './store.js';

/**
 * Pieces the status pages share (docs/status.md, Pages): an incident's card, its timeline,
 * what it affects and how long it lasted, a maintenance window. Everything time-dependent is
 * computed at the model's as-of time, never at the node's clock, so every node renders the
 * same bytes.
 */

const INCIDENT_PAGE = '/status/incidents';
export const incidentHref = (id: string) => `${INCIDENT_PAGE}/${id}`;

/** A time for people, with the machine-readable instant. */
export const stamp = (iso: string): string => `<time datetime="${escapeHtml(iso)}">${escapeHtml(timeText(iso))}</time>`;

export const impactChip = (impact: string): string =>
  `<span class="st ${impactIndicator(impact)}">${escapeHtml(impactLabel(impact))}</span>`;

/** Every update, newest first, its status in words. */
export function timeline(updates: readonly UpdateRow[]): string {
  const items = [...updates]
    .reverse()
    .map(
      (u) =>
        `<li><p><strong>${escapeHtml(incidentLabel(u.status))}</strong> - ${escapeHtml(u.message)}</p><p class="muted">${stamp(u.created_at)}</p></li>`,
    )
    .join('\n');
  return `<ol class="timeline">\n${items}\n</ol>`;
}

/** What an incident affects, in words: services, with the components it names; none is everything. */
export function affectedText(model: StatusModel, incident: IncidentView): string {
  if (incident.serviceIds.size === 0) return 'All services';
  return model.services
    .filter((s) => incident.serviceIds.has(s.row.id))
    .map((s) => {
      const named = s.components.filter((c) => incident.componentIds.has(c.row.id)).map((c) => c.row.name);
      return named.length > 0 ? `${s.row.name} (${named.join(', ')})` : s.row.name;
    })
    .join('; ');
}

/** Started to resolved, or to the as-of time while it is open. */
export function lasted(model: StatusModel, incident: IncidentView): { ms: number; open: boolean } {
  const end = incident.row.resolved_at ? Date.parse(incident.row.resolved_at) : model.at.getTime();
  return { ms: Math.max(0, end - Date.parse(incident.row.started_at)), open: incident.row.resolved_at === null };
}

/** One line of an incident in a list: its last status, and when it was resolved and how long it lasted. */
function outcomeText(model: StatusModel, incident: IncidentView): string {
  const { ms, open } = lasted(model, incident);
  const status = escapeHtml(incidentLabel(incident.row.status));
  if (open) return `${status} · ongoing for ${durationText(ms)}`;
  const resolved = stamp(incident.row.resolved_at as string);
  // "Resolved 27 Nov 2026, 11:05 UTC"; a later status says both ("Postmortem ready · resolved ...").
  const when = incident.row.status === 'resolved' ? `${status} ${resolved}` : `${status} · resolved ${resolved}`;
  return `${when} · lasted ${durationText(ms)}`;
}

/** An active incident on the status page: every update, what it affects, a link to its page. */
export function activeIncidentCard(model: StatusModel, incident: IncidentView): string {
  const id = escapeHtml(incident.row.id);
  return `<article class="card incident" id="incident-${id}"><div class="row"><h3 class="title"><a href="${incidentHref(id)}">${escapeHtml(incident.row.title)}</a></h3>${impactChip(incident.row.impact)}</div>
<p class="muted">Affects: ${escapeHtml(affectedText(model, incident))} · ${outcomeText(model, incident)}</p>
${timeline(incident.updates)}</article>`;
}

/** A list entry of an incident (past incidents, history). */
export const incidentListItem = (model: StatusModel, incident: IncidentView): string =>
  `<li><a href="${incidentHref(escapeHtml(incident.row.id))}">${escapeHtml(incident.row.title)}</a> ${impactChip(incident.row.impact)}<br><span class="muted">${outcomeText(model, incident)}</span></li>`;

/** A maintenance window: its description, window and length, and the service it concerns. */
export function maintenanceCard(model: StatusModel, m: MaintenanceRow): string {
  const service = model.services.find((s) => s.row.id === m.service_id);
  const length = durationText(Date.parse(m.ends_at) - Date.parse(m.starts_at));
  return `<article class="card maintenance"><div class="row"><h3 class="title">${escapeHtml(m.title)}</h3><span class="st maintenance">${m.status === 'in_progress' ? 'In progress' : 'Scheduled'}</span></div>
${m.description ? `<p>${escapeHtml(m.description)}</p>\n` : ''}<p class="muted">${service ? `${escapeHtml(service.row.name)}: ` : ''}${stamp(m.starts_at)} to ${stamp(m.ends_at)} (${length})</p></article>`;
}

/** Incidents grouped by the UTC day they started, newest day first. */
export function byDay(incidents: readonly IncidentView[]): Map<string, IncidentView[]> {
  const days = new Map<string, IncidentView[]>();
  for (const i of incidents) {
    const day = i.row.started_at.slice(0, 10);
    const list = days.get(day);
    if (list) list.push(i);
    else days.set(day, [i]);
  }
  return days;
}
