import { escapeHtml } from './html.js';

/**
 * Times and waits on pages, said as a person says them (docs/kernel.md, Pages). Pages carry no
 * script, so the server cannot know the visitor's time zone: a moment is written in UTC in words
 * ("27 November 2026, 16:48 UTC") inside `<time datetime="…">`, which keeps the exact instant
 * for assistive technology, browser extensions and copy-paste.
 */

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

const two = (n: number) => String(n).padStart(2, '0');

/** "27 November 2026, 16:48 UTC". */
function dateInWords(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

/** `<time datetime="ISO">27 November 2026, 16:48 UTC</time>`, escaped. */
export function timeTag(iso: string): string {
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(dateInWords(iso))}</time>`;
}

/** A duration in words, rounded up to what a person would wait: "39 seconds", "2 minutes", "3 hours", "2 days". */
function durationInWords(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (s < 60) return unit(s, 'second');
  if (s < 3600) return unit(Math.ceil(s / 60), 'minute');
  if (s < 2 * 86_400) return unit(Math.ceil(s / 3600), 'hour');
  return unit(Math.ceil(s / 86_400), 'day');
}

/** "in 10 minutes" or "10 minutes ago", from `now`. */
export function relativeInWords(iso: string, now: Date): string {
  const ms = Date.parse(iso) - now.getTime();
  if (Number.isNaN(ms)) return '';
  return ms >= 0 ? `in ${durationInWords(ms / 1000)}` : `${durationInWords(-ms / 1000)} ago`;
}

/** What a 429 page says: how long to wait, in words (never an HTTP header's name). */
export function tooManyAttempts(retryAfterSec: number | undefined): string {
  const wait = retryAfterSec === undefined ? 'a few minutes' : durationInWords(retryAfterSec);
  return `Too many attempts. Wait ${wait}, then try again.`;
}
