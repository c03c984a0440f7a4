import type { ComponentStatus } from './rules.js';

/**
 * Uptime arithmetic (docs/status.md). Statuspage's published weights: a major outage counts
 * fully, a partial outage 30%, degraded performance and maintenance count as up.
 * uptime = 1 - (major + 0.3 x partial) / span, where span is the window clamped to the
 * component's creation time; history intervals are cut at the window's edges.
 */
const PARTIAL_WEIGHT = 0.3;

export interface HistoryPoint {
  status: ComponentStatus;
  /** ms since epoch; the status holds from here to the next point (or the window's end). */
  at: number;
}

export interface UptimeFigure {
  /** 0..1 */
  ratio: number;
  /** Weighted downtime (major + 0.3 x partial) in ms. */
  downtimeMs: number;
  /** The measured span (window clamped to creation), in ms; 0 when the component did not exist. */
  spanMs: number;
}

export function componentUptime(
  history: readonly HistoryPoint[],
  createdAt: number,
  windowStart: number,
  windowEnd: number,
): UptimeFigure {
  const start = Math.max(windowStart, createdAt);
  const end = windowEnd;
  if (end <= start) return { ratio: 1, downtimeMs: 0, spanMs: 0 };
  let major = 0;
  let partial = 0;
  for (let i = 0; i < history.length; i++) {
    const from = Math.max(history[i].at, start);
    const to = Math.min(i + 1 < history.length ? history[i + 1].at : end, end);
    if (to <= from) continue;
    if (history[i].status === 'major_outage') major += to - from;
    else if (history[i].status === 'partial_outage') partial += to - from;
  }
  const downtimeMs = major + PARTIAL_WEIGHT * partial;
  const spanMs = end - start;
  return { ratio: 1 - downtimeMs / spanMs, downtimeMs, spanMs };
}

/**
 * A service's figure is its worst component's (lowest ratio), the same worst-of rule as its
 * status: a mean would let one dead component hide behind healthy ones. No measured
 * component: 100%.
 */
export function worstFigure(figures: readonly UptimeFigure[]): UptimeFigure {
  const measured = figures.filter((f) => f.spanMs > 0);
  if (measured.length === 0) return { ratio: 1, downtimeMs: 0, spanMs: 0 };
  return measured.reduce((worst, f) =>
    f.ratio < worst.ratio || (f.ratio === worst.ratio && f.downtimeMs > worst.downtimeMs) ? f : worst,
  );
}

/** Percent with four decimals (99.9977), the unit of every uptime number in the API. */
export const toPercent = (ratio: number): number => Math.round(ratio * 1_000_000) / 10_000;
/**
 * Percent with two decimals for people (the status page), as Statuspage shows it. Cut, never
 * rounded up: 99.999% reads 99.99%, so 100.00% only ever means no downtime at all. The small
 * epsilon absorbs binary noise (0.9372 x 10000 is 9371.999...).
 */
export const pagePercent = (ratio: number): string => (Math.floor(ratio * 10_000 + 1e-6) / 100).toFixed(2);
export const toMinutes = (ms: number): number => Math.round(ms / 600) / 100;
