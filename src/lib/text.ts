/**
 * Names people choose (account names, full names) end up in mail subjects and bodies, pages and
 * notifications. They stay one line of text: no control characters (newlines included), no
 * Unicode line or paragraph separators, no bidirectional overrides that reorder what is shown.
 */
const NOT_ONE_LINE = /[\p{Cc}\p{Zl}\p{Zp}\u202A-\u202E\u2066-\u2069]/u;
const NOT_ONE_LINE_ALL = new RegExp(NOT_ONE_LINE.source, 'gu');

/** The pattern a single-line name must match (for joi). */
export const SINGLE_LINE = new RegExp(`^[^${NOT_ONE_LINE.source.slice(1, -1)}]*$`, 'u');

/**
 * A stored value as one line of plain text at most `max` characters long, for a mail: values
 * stored before the rule, or from callers that skip it, are flattened rather than trusted.
 */
export function oneLine(value: string, max: number): string {
  const flat = value.replace(NOT_ONE_LINE_ALL, ' ').replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length > max
    ? `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`
    : flat;
}
