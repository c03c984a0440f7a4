import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * The one form of an email address Gantry stores and compares, and the rule that keeps a
 * look-alike of an address from registering (docs/kernel.md, Email addresses). Every door
 * (register, login, magic link, forgot password, change email, invitations, `gantry user
 * create`) goes through the joi `email` schema or `normalizeEmail`, both built on this.
 */

/** Controls, format characters (zero-width, bidi, soft hyphen), separators, unassigned, private use. */
const INVISIBLE = /[\p{C}\p{Z}]/u;
const MARK = /\p{M}/u;
const LETTER = /\p{L}/u;

const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Georgian',
  'Hangul',
  'Ethiopic',
  'Khmer',
  'Mongolian',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
].map((name) => ({ name, re: new RegExp(`\\p{Script=${name}}`, 'u') }));
/** Scripts written together in one language (Japanese, Korean, Chinese with Bopomofo). */
const CJK = new Set(['Han', 'Hiragana', 'Katakana', 'Hangul', 'Bopomofo']);
/** Scripts whose letters never need a separate combining mark once NFKC has composed them. */
const PRECOMPOSED = new Set(['Latin', 'Greek', 'Cyrillic']);
/** Greek and Cyrillic letters that look like Latin ones: a part made only of these reads as Latin. */
const LATIN_LOOKALIKES = new Set([...'аеорсухіјѕһԁԛԝӏүԍ', ...'αικνορυχ']);

function scriptOf(ch: string): string | null {
  for (const { name, re } of SCRIPTS) if (re.test(ch)) return name;
  return LETTER.test(ch) ? 'Other' : null; // digits, punctuation and marks belong to no script here
}

/** Why one part (the local part or a domain label) could pass for something else; null when fine. */
function lookAlikeProblem(part: string): string | null {
  const scripts = new Set<string>();
  for (const ch of part) {
    const script = scriptOf(ch);
    if (script) scripts.add(script);
  }
  const list = [...scripts];
  if (list.length > 1 && !list.every((s) => CJK.has(s))) return 'mixes scripts';
  if (MARK.test(part) && list.every((s) => PRECOMPOSED.has(s))) return 'has a detached accent';
  const letters = [...part].filter((ch) => LETTER.test(ch));
  if (list.length === 1 && list[0] !== 'Latin' && letters.length > 0 && letters.every((ch) => LATIN_LOOKALIKES.has(ch)))
    return 'imitates Latin letters';
  return null;
}

export type CanonicalEmail = { ok: true; email: string } | { ok: false; reason: string };

/**
 * NFKC (fullwidth and other compatibility forms become the plain letters), lower case, and the
 * domain in its Unicode form (an `xn--` label and its Unicode spelling are one domain). Refused:
 * invisible characters; a domain that is not valid IDNA; a local part or domain label that mixes
 * scripts, leaves an accent detached from a Latin, Greek or Cyrillic letter, or is written only
 * in Greek or Cyrillic letters that look Latin.
 */
export function canonicalEmail(raw: string): CanonicalEmail {
  const value = raw.normalize('NFKC').trim().toLowerCase().normalize('NFKC');
  if (INVISIBLE.test(value)) return { ok: false, reason: 'must not contain invisible or control characters' };
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return { ok: false, reason: 'must be a valid email' };
  const local = value.slice(0, at);
  const ascii = domainToASCII(value.slice(at + 1));
  if (!ascii) return { ok: false, reason: 'must have a valid domain' };
  const domain = domainToUnicode(ascii);
  for (const part of [local, ...domain.split('.')]) {
    const problem = lookAlikeProblem(part);
    if (problem) return { ok: false, reason: `${part === local ? 'local part' : 'domain'} ${problem}` };
  }
  return { ok: true, email: `${local}@${domain}` };
}

/** The stored form for a lookup; an address that cannot be canonical matches nothing stored. */
export function normalizeEmail(raw: string): string {
  const canonical = canonicalEmail(raw);
  return canonical.ok ? canonical.email : raw.normalize('NFKC').trim().toLowerCase();
}

/**
 * The form stored before the canonical one (trimmed, lower case). A row the canonical migration
 * left alone, because its canonical form was refused or another user's, is found by this form.
 */
export const legacyEmail = (raw: string): string => raw.trim().toLowerCase();
