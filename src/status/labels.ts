import type { ComponentStatus } from './rules.js';

/**
 * How statuses, impacts, times and durations read for people: the page, the incident page, the
 * feed and the subscribers' mails say them alike (capitalised words, never the raw values;
 * times in UTC, since the pages run no script to learn the reader's zone).
 */

export const COMPONENT_LABEL: Record<ComponentStatus, string> = {
  operational: 'Operational',
  degraded_performance: 'Degraded performance',
  partial_outage: 'Partial outage',
  major_outage: 'Major outage',
  maintenance: 'Under maintenance',
};

const INCIDENT_LABEL: Record<string, string> = {
  investigating: 'Investigating',
  identified: 'Identified',
  monitoring: 'Monitoring',
  resolved: 'Resolved',
  postmortem_ready: 'Postmortem ready',
};
export const incidentLabel = (status: string): string => INCIDENT_LABEL[status] ?? status;

const IMPACT_LABEL: Record<string, string> = { minor: 'Minor', partial: 'Partial outage', major: 'Major outage' };
export const impactLabel = (impact: string): string => IMPACT_LABEL[impact] ?? impact;

/** The indicator class of an impact (the chips' colours): minor, major, critical. */
export const impactIndicator = (impact: string): string =>
  impact === 'major' ? 'critical' : impact === 'partial' ? 'major' : 'minor';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `27 Nov 2026` for a UTC day (`2026-11-27` or any ISO instant of it). */
export function dayText(iso: string): string {
  const d = new Date(iso.length === 10 ? `${iso}T00:00:00Z` : iso);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** `27 Nov 2026, 16:32 UTC`. */
export const timeText = (iso: string): string => `${dayText(iso)}, ${iso.slice(11, 16)} UTC`;

/** A duration in words: `45 min`, `2 h 5 min`, `3 d 4 h`; under a minute is `less than a minute`. */
export function durationText(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'less than a minute';
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  if (days > 0) return hours > 0 ? `${days} d ${hours} h` : `${days} d`;
  if (hours > 0) return mins > 0 ? `${hours} h ${mins} min` : `${hours} h`;
  return `${mins} min`;
}
