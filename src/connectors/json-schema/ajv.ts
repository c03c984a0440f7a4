import { Ajv, type ErrorObject, type Format } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';

/**
 * RE2's lazy DFA caches the states it builds, up to 8 MB per pattern by default (re2js's
 * DFA maxMem): one 22-character pattern kept 7.7 MB after one random 256 KiB input. Past this
 * smaller budget RE2 falls back to its NFA, which runs in the same linear bound, so a pattern
 * retains at most this much however it is used (docs/connectors.md, "JSON Schema").
 */
export const DFA_MAX_BYTES = 64 * 1024;

/** Thrown by a pattern test when the validation's pattern work is spent. */
export class PatternWorkExceeded extends Error {}

/**
 * The pattern work one validation may still do, in RE2 steps: a test of a string costs its
 * length times the pattern's program size (the NFA's bound per character, and the DFA's cost
 * of a new state), or its length alone for a one-pass pattern (one instruction per character).
 * The worker sets `remaining` before each validation.
 */
export interface PatternMeter {
  remaining: number;
}

/** re2js's internals this file relies on (pinned version; test/unit/json-schema-patterns.test.ts checks them). */
interface Re2Internals {
  re2Input: { prog: unknown; onepass: unknown; lazyDFA: unknown; readonly dfa: object };
}

/** A pattern compiled for RE2 whose every test is charged to a meter. */
export interface MeteredPattern {
  readonly program: number;
  test(s: string): boolean;
}

/** A JSON Schema `pattern` (ECMA-262 syntax) compiled for RE2; throws when RE2 cannot run it. */
export function re2(pattern: string, flags: string, meter: PatternMeter): MeteredPattern {
  const re = RE2JS.compile(
    RE2JS.translateRegExp(pattern),
    (flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) | (flags.includes('m') ? RE2JS.MULTILINE : 0),
  );
  const inner = (re as unknown as Re2Internals).re2Input;
  const Dfa = inner.dfa.constructor as new (prog: unknown, maxMem: number) => unknown;
  inner.lazyDFA = new Dfa(inner.prog, DFA_MAX_BYTES);
  const program = re.programSize();
  const perCharacter = inner.onepass !== null ? 1 : program;
  return {
    program,
    test(s: string) {
      const units = s.length * perCharacter;
      if (units > meter.remaining) throw new PatternWorkExceeded();
      meter.remaining -= units;
      return re.test(s);
    },
  };
}

/** Patterns a schema's inspection compiled, by `flags/pattern`: ajv reuses them instead of compiling again. */
export type CompiledPatterns = Map<string, MeteredPattern>;
export const patternKey = (pattern: string, flags: string) => `${flags}/${pattern}`;

/**
 * ajv's `code.regExp` engine: called as regExp(pattern, flags), it needs an object with test();
 * toString() keys ajv's per-schema pattern table, so it must differ between patterns.
 */
function re2Engine(meter: PatternMeter, compiled: CompiledPatterns) {
  const engine = (pattern: string, flags: string) => {
    const re = compiled.get(patternKey(pattern, flags)) ?? re2(pattern, flags, meter);
    return { test: (s: string) => re.test(s), toString: () => `/${pattern}/${flags}` };
  };
  // Only used when ajv writes standalone code, which Gantry never does.
  engine.code = 'require("re2js")';
  return engine;
}

/**
 * ajv-formats' formats with every regular expression run by RE2. The three whose expressions
 * use lookarounds get linear equivalents; `uri` uses the "fast" expression (the full one is a
 * function over a large backtracking expression).
 */
function safeFormats(meter: PatternMeter): Record<string, Format> {
  const get = (addFormatsModule as unknown as { get: (name: string, mode?: string) => Format }).get;
  const out: Record<string, Format> = {};
  const asRe2 = (re: RegExp) => {
    const compiled = re2(re.source, re.flags, meter);
    return (s: string) => compiled.test(s);
  };
  const names = [
    'date',
    'time',
    'date-time',
    'iso-time',
    'iso-date-time',
    'uri',
    'uri-reference',
    'uri-template',
    'email',
    'ipv4',
    'ipv6',
    'regex',
    'uuid',
    'json-pointer',
    'json-pointer-uri-fragment',
    'relative-json-pointer',
    'byte',
    'int32',
    'int64',
    'float',
    'double',
    'password',
    'binary',
  ];
  for (const name of names) {
    const format = get(name, name === 'uri' ? 'fast' : 'full');
    if (format instanceof RegExp) out[name] = asRe2(format);
    else if (typeof format === 'object' && format !== null && 'validate' in format && format.validate instanceof RegExp)
      out[name] = { ...format, validate: asRe2(format.validate) } as Format;
    // The remaining ones are functions over short anchored expressions (date, time, byte) or
    // only compile their input (regex): linear already.
    else out[name] = format;
  }
  const duration = re2('^P(?:(?:\\d+Y)?(?:\\d+M)?(?:\\d+D)?(?:T(?:\\d+H)?(?:\\d+M)?(?:\\d+S)?)?|\\d+W)$', '', meter);
  // ISO 8601 durations (RFC 3339 appendix A): at least one part, and T only before a time part.
  out.duration = (s: string) => s !== 'P' && !s.endsWith('T') && duration.test(s);
  const label = re2(
    '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\\.?$',
    'i',
    meter,
  );
  out.hostname = (s: string) => s.replace(/\.$/, '').length <= 253 && label.test(s);
  const url = re2('^(?:https?|ftp)://[^\\s/?#]+[^\\s]*$', 'i', meter);
  out.url = (s: string) => url.test(s);
  return out;
}

/** JSON text with object keys sorted: equal JSON values (in JSON Schema's sense) give equal text. */
const sortedKeys = (_key: string, value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((k) => [k, (value as Record<string, unknown>)[k]]),
      )
    : value;

/**
 * uniqueItems in linear time: ajv compares object items pair by pair, which took 20 s on a
 * 20,000-item array; here every item is reduced once to a canonical text and looked up.
 */
function uniqueItems(this: unknown, schema: boolean, data: unknown[]): boolean {
  const validate = uniqueItems as typeof uniqueItems & { errors?: Array<Partial<ErrorObject>> | null };
  validate.errors = null;
  if (!schema) return true;
  const seen = new Map<string, number>();
  for (let i = 0; i < data.length; i++) {
    const text = JSON.stringify(data[i], sortedKeys) ?? 'undefined';
    const j = seen.get(text);
    if (j !== undefined) {
      validate.errors = [
        {
          keyword: 'uniqueItems',
          message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
          params: { i, j },
        },
      ];
      return false;
    }
    seen.set(text, i);
  }
  return true;
}

/**
 * Ajv instances configured for untrusted schemas (RE2 patterns and formats, linear
 * uniqueItems). `fresh()` is a throwaway instance per compiled schema, because an Ajv instance
 * retains every schema it compiled (its `_cache` and its code scope); `meta()` is the one
 * long-lived instance, which only checks schemas against the meta-schema and so keeps none.
 * Every pattern and format test of every instance is charged to `meter`.
 */
export function ajvInstances(meter: PatternMeter) {
  // Built on first use: compiling ajv's meta-schemas is start-up memory most runs never need.
  let formats: Record<string, Format> | null = null;
  let metaAjv: Ajv | null = null;
  const newAjv = (meta: boolean, compiled: CompiledPatterns): Ajv => {
    formats ??= safeFormats(meter);
    // optimize: false: ajv's optimizer passes cost several times the compile itself.
    const ajv = new Ajv({
      allErrors: true,
      strict: false,
      meta,
      validateSchema: false,
      addUsedSchema: false,
      code: { regExp: re2Engine(meter, compiled), optimize: false },
    });
    (addFormatsModule as unknown as (a: Ajv, o: object) => void)(ajv, { mode: 'fast', keywords: true });
    for (const [name, format] of Object.entries(formats)) ajv.addFormat(name, format);
    ajv.removeKeyword('uniqueItems');
    ajv.addKeyword({
      keyword: 'uniqueItems',
      type: 'array',
      schemaType: 'boolean',
      errors: true,
      validate: uniqueItems,
    });
    return ajv;
  };
  return {
    /** A throwaway instance; `compiled` holds the schema's patterns, already compiled by its inspection. */
    fresh: (compiled: CompiledPatterns): Ajv => newAjv(false, compiled),
    meta: (): Ajv => (metaAjv ??= newAjv(true, new Map())),
  };
}

export type AjvInstances = ReturnType<typeof ajvInstances>;
