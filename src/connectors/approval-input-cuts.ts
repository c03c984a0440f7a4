/**
 * Fitting a parked call's input into the approver's view (docs/connectors.md, Invocation and
 * approvals) without hiding a key: long strings are shortened first, each on its own and marked
 * with what was cut; only input whose structure alone passes the view loses entries, nested
 * containers before the top level, each with a marker entry. Every shortening is listed.
 */

/** What was shortened, where (`path`: keys by dots, indexes in brackets; "" is the input itself). */
export interface InputCut {
  path: string;
  /** A string value, a key's name, an array's items or an object's keys. */
  kind: 'string' | 'key' | 'array' | 'object';
  /** Its length before: characters (UTF-16 code units) for a string or key, else items or keys. */
  originalLength: number;
}

/** The least of a long string that is kept before entries of containers are cut instead. */
const MIN_CHARS = 40;
/** Room left for a marker: a string this much over the limit is shown whole rather than cut. */
const MARKER_ROOM = 32;

const OVER = Symbol('over budget');

const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;
const keyPath = (parent: string, key: string) =>
  IDENTIFIER.test(key) ? (parent ? `${parent}.${key}` : key) : `${parent}[${JSON.stringify(key)}]`;

/** Code units of the character at `i` of `s` and its length in JSON text (as JSON.stringify escapes it). */
function charCost(s: string, i: number): [number, number] {
  const c = s.charCodeAt(i);
  if (c === 0x22 || c === 0x5c) return [1, 2];
  if (c < 0x20) return [1, c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6];
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = s.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff ? [2, 2] : [1, 6];
  }
  return c >= 0xdc00 && c <= 0xdfff ? [1, 6] : [1, 1];
}

/** Characters that JSON text escapes, and surrogates (a pair must not be split). */
const SPECIAL = /["\\\u0000-\u001f\ud800-\udfff]/;

/** How much of `s` fits in `limit` characters of JSON text (quotes aside), never half a surrogate pair. */
function fitText(s: string, limit: number): { kept: number; cost: number } {
  if (!SPECIAL.test(s.length > limit ? s.slice(0, limit) : s)) {
    const kept = Math.min(s.length, limit);
    return { kept, cost: kept };
  }
  let kept = 0;
  let cost = 0;
  while (kept < s.length) {
    const [units, c] = charCost(s, kept);
    if (cost + c > limit) break;
    kept += units;
    cost += c;
  }
  return { kept, cost };
}

interface Limits {
  /** JSON characters kept of a long string (value or key). */
  chars: number;
  /** Entries kept of a nested array or object. */
  items: number;
  /** Entries kept of the input itself. */
  rootItems: number;
}

/** One attempt at a view under `limits`: throws OVER as soon as the text passes `budget`. */
function attempt(input: unknown, limits: Limits, budget: number, entriesOf: (v: object) => Array<[string, unknown]>) {
  const cuts: InputCut[] = [];
  let used = 0;
  const spend = (n: number) => {
    used += n;
    if (used > budget) throw OVER;
  };
  /** Opening and closing brackets and the commas between `count` elements. */
  const container = (count: number) => spend(2 + Math.max(0, count - 1));

  /** A string as shown (its quotes spent too), and its length before when it was cut. */
  function text(s: string): { shown: string; cutFrom: number | null } {
    const whole = fitText(s, limits.chars + MARKER_ROOM);
    if (whole.kept === s.length) {
      spend(whole.cost + 2);
      return { shown: s, cutFrom: null };
    }
    const { kept, cost } = fitText(s, limits.chars);
    const marker = `…[cut ${grouped(s.length - kept)} characters]`;
    spend(cost + marker.length + 2);
    return { shown: s.slice(0, kept) + marker, cutFrom: s.length };
  }

  /** A marker's text: short and plain (the ellipsis is one character of JSON text). */
  const plain = (s: string) => {
    spend(s.length + 2);
    return s;
  };

  // Paths are built only for what is cut: closures, not strings per node.
  function value(v: unknown, path: () => string, depth: number): unknown {
    if (typeof v === 'string') {
      const { shown, cutFrom } = text(v);
      if (cutFrom !== null) cuts.push({ path: path(), kind: 'string', originalLength: cutFrom });
      return shown;
    }
    const max = depth === 0 ? limits.rootItems : limits.items;
    if (Array.isArray(v)) {
      const shown = Math.min(v.length, max);
      const cut = shown < v.length;
      container(shown + (cut ? 1 : 0));
      const out: unknown[] = [];
      for (let i = 0; i < shown; i++) out.push(value(v[i], () => `${path()}[${i}]`, depth + 1));
      if (cut) {
        out.push(plain(`…[cut ${grouped(v.length - shown)} more items]`));
        cuts.push({ path: path(), kind: 'array', originalLength: v.length });
      }
      return out;
    }
    if (isObject(v)) {
      const entries = entriesOf(v);
      const shown = Math.min(entries.length, max);
      const cut = shown < entries.length;
      container(shown + (cut ? 1 : 0));
      // A cut key, or the marker, takes a name that no key of the object has nor another cut
      // one: " (2)" keeps both in view. A key shown whole is unique already.
      const renamed = new Set<string>();
      const unique = (name: string) => {
        let free = name;
        for (let n = 2; Object.hasOwn(v, free) || renamed.has(free); n++) free = `${name} (${n})`;
        renamed.add(free);
        spend(free.length - name.length);
        return free;
      };
      const out: Array<[string, unknown]> = [];
      for (let i = 0; i < shown; i++) {
        const [key, child] = entries[i];
        const { shown: keyShown, cutFrom } = text(key);
        const name = cutFrom === null ? keyShown : unique(keyShown);
        spend(1);
        const childPath = () => keyPath(path(), name);
        if (cutFrom !== null) cuts.push({ path: childPath(), kind: 'key', originalLength: cutFrom });
        out.push([name, value(child, childPath, depth + 1)]);
      }
      if (cut) {
        const name = unique(plain('…'));
        spend(1);
        out.push([name, plain(`[cut ${grouped(entries.length - shown)} more keys]`)]);
        cuts.push({ path: path(), kind: 'object', originalLength: entries.length });
      }
      return Object.fromEntries(out);
    }
    // JSON.parse gave it: a number, true, false or null, written as String() writes them.
    spend(String(v).length);
    return v;
  }

  return { input: value(input, () => '', 0), cuts };
}

type Attempt = (limits: Limits) => ReturnType<typeof attempt> | null;

/** Attempts over one input, sharing its objects' entries (listed once, not per attempt). */
function attempts(input: unknown, budget: number): Attempt {
  const listed = new WeakMap<object, Array<[string, unknown]>>();
  const entriesOf = (v: object) => {
    const known = listed.get(v);
    if (known) return known;
    const entries = Object.entries(v);
    listed.set(v, entries);
    return entries;
  };
  return (limits) => {
    try {
      return attempt(input, limits, budget, entriesOf);
    } catch (err) {
      if (err === OVER) return null;
      throw err;
    }
  };
}

/** The largest n in [lo, hi] whose attempt fits, and that attempt; `best` is lo's. */
function largest(
  lo: number,
  hi: number,
  best: { input: unknown; cuts: InputCut[] },
  make: (n: number) => ReturnType<Attempt>,
) {
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const got = make(mid);
    if (got) {
      lo = mid;
      best = got;
    } else hi = mid - 1;
  }
  return best;
}

/**
 * `input` as it fits in `budget` characters of JSON text, and what was shortened. Each attempt
 * stops at the budget, so the search costs a few times the budget, whatever the input's size.
 */
export function cutToFit(input: unknown, budget: number): { input: unknown; cuts: InputCut[] } {
  const run = attempts(input, budget);
  const all = Number.MAX_SAFE_INTEGER;
  // An attempt that cuts nothing is the input itself (it stops at the budget, unlike JSON.stringify).
  if (run({ chars: budget, items: all, rootItems: all })?.cuts.length === 0) return { input, cuts: [] };
  const strings = (chars: number) => run({ chars, items: all, rootItems: all });
  const shortest = strings(MIN_CHARS);
  if (shortest) return largest(MIN_CHARS, budget, shortest, strings);
  const nested = (items: number) => run({ chars: MIN_CHARS, items, rootItems: all });
  const fewest = nested(0);
  if (fewest) return largest(0, budget, fewest, nested);
  // Only the top level's entries are left to cut; none of them (a marker alone) always fits.
  const top = (rootItems: number) => run({ chars: MIN_CHARS, items: 0, rootItems });
  return largest(0, budget, top(0)!, top);
}
