import { escapeHtml as escape } from '../http/html.js';

/**
 * How the account center words dates and devices for a person (docs/identity.md, Account
 * center): a date as text with its machine form in `<time datetime>`, a session's browser and
 * system instead of a raw User-Agent header.
 */
const DATE = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

export function when(iso: string | null, never = 'never'): string {
  if (!iso) return escape(never);
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return escape(iso);
  return `<time datetime="${escape(date.toISOString())}">${escape(DATE.format(date))} UTC</time>`;
}

const BROWSERS: Array<[RegExp, string]> = [
  [/Edg(?:e|A|iOS)?\/[\d.]+/, 'Edge'],
  [/OPR\/[\d.]+/, 'Opera'],
  [/Firefox\/[\d.]+|FxiOS/, 'Firefox'],
  [/Chrome\/[\d.]+|CriOS/, 'Chrome'],
  [/Version\/[\d.]+.*Safari/, 'Safari'],
  [/^curl\//, 'curl'],
  [/^node|undici/i, 'Node.js'],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/Windows/, 'Windows'],
  [/Android/, 'Android'],
  [/iPhone|iPad|iOS/, 'iOS'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** "Firefox on Linux", or the header itself (shortened) when it names neither. */
export function deviceName(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  if (browser ?? system) return (browser ?? system) as string;
  return userAgent.length > 60 ? `${userAgent.slice(0, 57)}…` : userAgent;
}
