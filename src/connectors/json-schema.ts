import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type Format, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import { badRequest, DomainError } from '../http/errors.js';

/**
 * JSON Schema for connector configs and tool inputs (ajv 8 + ajv-formats), made safe for schemas
 * written by any user or by an upstream MCP server (docs/connectors.md, "JSON Schema"):
 * - every `pattern`, `patternProperties` key and format regex runs on RE2 (re2js), whose matching
 *   is linear in the input, so no pattern can backtrack for hours; patterns RE2 cannot express
 *   (lookarounds, backreferences) are refused;
 * - a schema is at most SCHEMA_MAX_BYTES serialized, SCHEMA_MAX_NODES objects and
 *   SCHEMA_MAX_DEPTH deep, so compiling it is bounded; a validated value is at most VALUE_MAX_BYTES;
 * - compiled validators live in one bounded cache sized by count and by an estimate of their
 *   memory, and ajv itself keeps nothing: each schema is compiled by a throwaway Ajv instance,
 *   because an Ajv instance retains every schema it compiled (its `_cache` and its code scope).
 */
const SCHEMA_MAX_BYTES = 64 * 1024;
const SCHEMA_MAX_DEPTH = 32;
/** Objects in a schema: ajv's compile time grows with them (up to about 0.5 ms each). */
const SCHEMA_MAX_NODES = 500;
const VALUE_MAX_BYTES = 256 * 1024;
/** A compiled validator weighs about 22 times its schema's JSON (measured on ajv 8): 32 leaves room. */
const COMPILED_BYTES_PER_SCHEMA_BYTE = 32;
const COMPILED_BASE_BYTES = 64 * 1024;
const CACHE_MAX_BYTES = 64 * 1024 * 1024;

type Detail = { field: string; message: string; type: string };

/** Paths of ajv errors as error.details entries. */
function ajvDetails(errors: ErrorObject[] | null | undefined, root: string): Detail[] {
  return (errors ?? []).map((e) => {
    const extra =
      e.keyword === 'required'
        ? `/${(e.params as { missingProperty: string }).missingProperty}`
        : e.keyword === 'additionalProperties'
          ? `/${(e.params as { additionalProperty: string }).additionalProperty}`
          : '';
    const pointer = `${e.instancePath}${extra}`;
    return {
      field: `${root}${pointer.replace(/\//g, '.')}`.replace(/\.$/, ''),
      message: e.message ?? 'is invalid',
      type: `jsonschema.${e.keyword}`,
    };
  });
}

/** A JSON Schema `pattern` (ECMA-262 syntax) compiled for RE2; throws when RE2 cannot run it. */
function re2(pattern: string, flags = ''): RE2JS {
  return RE2JS.compile(
    RE2JS.translateRegExp(pattern),
    (flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) | (flags.includes('m') ? RE2JS.MULTILINE : 0),
  );
}

/**
 * ajv's `code.regExp` engine: called as regExp(pattern, flags), it needs an object with test();
 * toString() keys ajv's per-schema pattern table, so it must differ between patterns.
 */
function re2Engine(pattern: string, flags: string) {
  const re = re2(pattern, flags);
  return { test: (s: string) => re.test(s), toString: () => `/${pattern}/${flags}` };
}
// Only used when ajv writes standalone code, which Gantry never does.
re2Engine.code = 'require("re2js")';

/**
 * ajv-formats' formats with every regular expression run by RE2. The three whose expressions
 * use lookarounds get linear equivalents; `uri` uses the "fast" expression (the full one is a
 * function over a large backtracking expression).
 */
function safeFormats(): Record<string, Format> {
  const get = (addFormatsModule as unknown as { get: (name: string, mode?: string) => Format }).get;
  const out: Record<string, Format> = {};
  const asRe2 = (re: RegExp) => {
    const compiled = re2(re.source, re.flags);
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
  const duration = re2('^P(?:(?:\\d+Y)?(?:\\d+M)?(?:\\d+D)?(?:T(?:\\d+H)?(?:\\d+M)?(?:\\d+S)?)?|\\d+W)$');
  // ISO 8601 durations (RFC 3339 appendix A): at least one part, and T only before a time part.
  out.duration = (s: string) => s !== 'P' && !s.endsWith('T') && duration.test(s);
  const label = re2('^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\\.?$', 'i');
  out.hostname = (s: string) => s.replace(/\.$/, '').length <= 253 && label.test(s);
  const url = re2('^(?:https?|ftp)://[^\\s/?#]+[^\\s]*$', 'i');
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

/** Why a schema is refused: the fields it names are paths inside the schema. */
class SchemaRefusal {
  constructor(
    readonly message: string,
    readonly details: Detail[],
  ) {}
}

const SKIP_VALUES = new Set(['enum', 'const', 'default', 'examples']);

/**
 * Checks the size, depth and every pattern of a schema before ajv sees it, so a refusal names
 * the path of the offending keyword (ajv's compile errors name none).
 */
function inspect(schema: unknown): Detail[] {
  const out: Detail[] = [];
  let nodes = 0;
  const tryRe2 = (pattern: string, field: string) => {
    try {
      re2(pattern, 'u');
    } catch (err) {
      out.push({
        field,
        message: `is not supported: ${(err as Error).message} (RE2 syntax: no lookarounds or backreferences)`,
        type: 'jsonschema.pattern',
      });
    }
  };
  const walk = (node: unknown, path: string, depth: number): void => {
    if (out.length >= 20 || typeof node !== 'object' || node === null) return;
    if (depth > SCHEMA_MAX_DEPTH) {
      out.push({ field: path, message: `nests deeper than ${SCHEMA_MAX_DEPTH} levels`, type: 'jsonschema.depth' });
      return;
    }
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${path}.${i}`, depth + 1));
    if (++nodes === SCHEMA_MAX_NODES + 1)
      out.push({ field: '', message: `has more than ${SCHEMA_MAX_NODES} objects`, type: 'jsonschema.size' });
    for (const [key, value] of Object.entries(node)) {
      if (SKIP_VALUES.has(key)) continue;
      if (key === 'pattern' && typeof value === 'string') tryRe2(value, `${path}.pattern`);
      if (key === 'patternProperties' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const p of Object.keys(value)) tryRe2(p, `${path}.patternProperties.${p}`);
      }
      walk(value, `${path}.${key}`, depth + 1);
    }
  };
  walk(schema, '', 0);
  return out;
}

type Compiled = ValidateFunction | SchemaRefusal;

/** The one JSON Schema engine of the connectors domain (configSchema, inputSchema, outputSchema). */
export function createJsonSchemaEngine() {
  // Built on first use: compiling ajv's meta-schemas is start-up memory most runs never need.
  let formats: Record<string, Format> | null = null;
  let metaAjv: Ajv | null = null;
  const newAjv = (meta: boolean): Ajv => {
    formats ??= safeFormats();
    // optimize: false: ajv's optimizer passes cost several times the compile itself.
    const ajv = new Ajv({
      allErrors: true,
      strict: false,
      meta,
      validateSchema: false,
      addUsedSchema: false,
      code: { regExp: re2Engine, optimize: false },
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
  // Only checks schemas against the meta-schema: it compiles no user schema, so it keeps none.
  const getMetaAjv = (): Ajv => (metaAjv ??= newAjv(true));

  const compiled = new LRUCache<string, Compiled>({
    max: 2000,
    maxSize: CACHE_MAX_BYTES,
    sizeCalculation: (value, key) =>
      value instanceof SchemaRefusal
        ? 1024
        : COMPILED_BASE_BYTES + COMPILED_BYTES_PER_SCHEMA_BYTE * Number(key.slice(0, key.indexOf(':'))),
    ttl: 3_600_000,
  });

  function compile(schema: unknown, text: string): Compiled {
    // Size and depth first: the meta-schema check recurses as deep as the schema does.
    const problems = inspect(schema);
    if (problems.length > 0)
      return new SchemaRefusal(
        problems.some((p) => p.type === 'jsonschema.pattern')
          ? 'uses a pattern Gantry does not evaluate'
          : 'is too large or too deeply nested',
        problems,
      );
    const meta = getMetaAjv();
    let valid: boolean;
    try {
      valid = meta.validateSchema(schema as object) as boolean;
    } catch (err) {
      // An unknown $schema, for instance.
      return new SchemaRefusal(`is not a supported JSON Schema: ${(err as Error).message}`, [
        { field: '', message: (err as Error).message, type: 'jsonschema.schema' },
      ]);
    }
    if (!valid) return new SchemaRefusal('is not a valid JSON Schema', ajvDetails(meta.errors, ''));
    try {
      // A throwaway instance: the validator keeps it alive while cached, and nothing else does.
      return newAjv(false).compile(JSON.parse(text) as object);
    } catch (err) {
      return new SchemaRefusal(`is not a valid JSON Schema: ${(err as Error).message}`, [
        { field: '', message: (err as Error).message, type: 'jsonschema.compile' },
      ]);
    }
  }

  /** The compiled validator of a schema, or why it is refused (cached either way). */
  function validator(schema: unknown): Compiled {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
      return new SchemaRefusal('must be a JSON Schema object', [
        { field: '', message: 'must be an object', type: 'jsonschema.schema' },
      ]);
    let text: string;
    try {
      text = JSON.stringify(schema);
    } catch {
      return new SchemaRefusal(`nests deeper than ${SCHEMA_MAX_DEPTH} levels`, [
        { field: '', message: 'too deeply nested', type: 'jsonschema.depth' },
      ]);
    }
    const bytes = Buffer.byteLength(text);
    if (bytes > SCHEMA_MAX_BYTES)
      return new SchemaRefusal(`is larger than ${SCHEMA_MAX_BYTES / 1024} KiB`, [
        { field: '', message: `must be at most ${SCHEMA_MAX_BYTES} bytes as JSON`, type: 'jsonschema.size' },
      ]);
    const key = `${bytes}:${createHash('sha256').update(text).digest('base64url')}`;
    let fn = compiled.get(key);
    if (!fn) {
      fn = compile(schema, text);
      compiled.set(key, fn);
    }
    return fn;
  }

  const located = (refusal: SchemaRefusal, field: string): Detail[] =>
    refusal.details.map((d) => ({ ...d, field: `${field}${d.field}` }));

  return {
    /** Refuses (400 VALIDATION_FAILED, details naming the schema paths) a schema Gantry will not evaluate. */
    assertSchema(schema: unknown, field: string): void {
      const fn = validator(schema);
      if (fn instanceof SchemaRefusal) throw badRequest(`${field} ${fn.message}`, located(fn, field));
    },

    /**
     * Validates a value against a schema; failures list every failing path in error.details.
     * A value over VALUE_MAX_BYTES is refused unread. A stored schema that is refused (an
     * upstream tool's, synced as the server sent it) answers 409: the call cannot be checked,
     * so it is not made.
     */
    assertValid(schema: Record<string, unknown>, value: unknown, root: string, what: string): void {
      const tooDeep = () =>
        badRequest(`${what} is too deeply nested`, [
          { field: root, message: 'is too deeply nested', type: 'jsonschema.depth' },
        ]);
      let size: number;
      try {
        size = Buffer.byteLength(JSON.stringify(value) ?? '');
      } catch {
        throw tooDeep();
      }
      if (size > VALUE_MAX_BYTES)
        throw badRequest(`${what} is larger than ${VALUE_MAX_BYTES / 1024} KiB`, [
          { field: root, message: `must be at most ${VALUE_MAX_BYTES} bytes as JSON`, type: 'jsonschema.size' },
        ]);
      const fn = validator(schema);
      if (fn instanceof SchemaRefusal)
        throw new DomainError('CONFLICT', `${what} cannot be checked: its schema ${fn.message}`, located(fn, 'schema'));
      let valid: boolean;
      try {
        valid = fn(value) as boolean;
      } catch (err) {
        if (err instanceof RangeError) throw tooDeep();
        throw err;
      }
      if (!valid) throw badRequest(`${what} does not match its schema`, ajvDetails(fn.errors, root));
    },

    /**
     * What the engine holds: cached validators (count, estimated bytes, bound) and how many
     * schemas and code values the long-lived meta-schema Ajv retains (constant by design).
     */
    stats() {
      const meta = getMetaAjv() as unknown as {
        _cache: Map<unknown, unknown>;
        schemas: object;
        refs: object;
        scope: { _values: Record<string, Map<unknown, unknown>> };
      };
      const scopeValues = Object.values(meta.scope._values).reduce((n, m) => n + m.size, 0);
      return {
        cached: compiled.size,
        cachedBytes: compiled.calculatedSize,
        maxBytes: CACHE_MAX_BYTES,
        ajvRetained: {
          cache: meta._cache.size,
          schemas: Object.keys(meta.schemas).length,
          refs: Object.keys(meta.refs).length,
          scopeValues,
        },
      };
    },
  };
}
