/**
 * Names a self-registered client may not take (docs/oauth.md, Client names). The consent, sign-in
 * and approval pages show a client's name as the client chose it, so the name must not hide or
 * reorder text, nor pass for the operator's brand or for a checked application. The comparison
 * is a small skeleton in the spirit of Unicode TR 39 (confusable detection), not its whole table:
 * NFKC, the common Cyrillic and Greek lookalikes of Latin letters, case and accents dropped, and
 * `i l 1 |`, `0 o`, `rn m`, `vv w` taken as equal. A word mixing Latin, Cyrillic and Greek letters
 * is refused outright, which covers the lookalikes the map leaves out.
 */

/**
 * Characters that draw nothing or reorder what follows: every format character (Cf: the bidi
 * controls U+202A-202E, U+2066-2069, U+200E/F, U+061C; zero-width U+200B-200D, U+2060, U+FEFF;
 * soft hyphen...), private-use and unassigned code points, and the few blank letters and marks
 * of other categories (combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
 * Mongolian vowel separator, braille blank).
 */
const HIDDEN = /[\p{Cf}\p{Co}\p{Cn}\u034f\u115f\u1160\u17b4\u17b5\u180e\u2800\u3164\uffa0]/u;

/** Check marks: a name like "Acme ✓" passes for a verified application. */
const CHECK_MARKS = /[\u2611\u2705\u2713\u2714\u{1f5f8}\u{1f5f9}]/u;

/** Each Latin letter with the Cyrillic and Greek letters (either case) that look like it. */
const LOOKALIKES_OF: Record<string, string> = {
  a: 'аАαΑ',
  b: 'вВьβΒ',
  c: 'сС',
  d: 'ԁԀ',
  e: 'еЕεΕ',
  g: 'ɡ',
  h: 'һҺнНΗ',
  i: 'іІιΙı',
  j: 'јЈȷ',
  k: 'кКκΚ',
  l: 'ӏӀ',
  m: 'мМΜ',
  n: 'пηΝ',
  o: 'оОοΟ',
  p: 'рРρΡ',
  q: 'ԛԚ',
  r: 'г',
  s: 'ѕЅ',
  t: 'тТτΤ',
  u: 'υ',
  v: 'ν',
  w: 'ԝԜω',
  x: 'хХχΧ',
  y: 'уУүҮγΥ',
  z: 'Ζ',
};
const LATIN_OF = new Map(Object.entries(LOOKALIKES_OF).flatMap(([latin, all]) => [...all].map((c) => [c, latin])));

const SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u];

/** Words claiming a check nobody made. */
const CLAIMS = ['verified', 'official'];

/**
 * A name as a list of comparable words: NFKC, camelCase split, lookalikes mapped, lower case
 * without accents, the confusable letter groups unified, and runs of single letters joined
 * ("G a n t r y" is one word).
 */
function skeletonWords(text: string): string[] {
  const mapped = [...text.normalize('NFKC').replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')]
    .map((c) => LATIN_OF.get(c) ?? c)
    .join('')
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[il1|]/g, 'l')
    .replace(/0/g, 'o');
  const words: string[] = [];
  let letters = '';
  for (const word of mapped.split(/[^\p{L}\p{N}]+/u).filter(Boolean)) {
    if ([...word].length === 1) {
      letters += word;
      continue;
    }
    if (letters) words.push(letters);
    letters = '';
    words.push(word);
  }
  if (letters) words.push(letters);
  return words.map((w) => w.replace(/rn/g, 'm').replace(/vv/g, 'w'));
}

/** Whether `words` holds `phrase` as consecutive words. */
function containsPhrase(words: string[], phrase: string[]): boolean {
  if (phrase.length === 0) return false;
  return words.some((_, i) => phrase.every((p, j) => words[i + j] === p));
}

/** Latin, Cyrillic and Greek letters in one word: a lookalike hidden in an ordinary name. */
function mixesScripts(text: string): boolean {
  return text
    .normalize('NFKC')
    .split(/[^\p{L}\p{M}\p{N}]+/u)
    .some((word) => SCRIPTS.filter((script) => script.test(word)).length > 1);
}

/** What is wrong with a self-registered client's name beyond its length, or null. */
export function confusableNameProblem(name: string, brandName: string): string | null {
  if (HIDDEN.test(name)) return 'client_name must not contain invisible or text-direction characters';
  if (CHECK_MARKS.test(name)) return 'client_name must not contain check marks';
  if (mixesScripts(name)) return 'client_name must not mix Latin, Cyrillic and Greek letters in one word';
  const words = skeletonWords(name);
  if (containsPhrase(words, skeletonWords(brandName)))
    return `client_name must not use the name ${brandName}: it is for the operator's own applications`;
  if (CLAIMS.some((claim) => containsPhrase(words, skeletonWords(claim))))
    return 'client_name must not claim to be verified or official';
  return null;
}
