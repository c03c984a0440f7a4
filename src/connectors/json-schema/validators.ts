import { createHash } from 'node:crypto';
import { getHeapStatistics } from 'node:v8';
import { LRUCache } from 'lru-cache';
import { ajvInstances, DFA_MAX_BYTES, PatternWorkExceeded, type PatternMeter } from './ajv.js';
import { SCHEMA_MAX_BYTES, SchemaRefusal, type Detail } from './refusals.js';
import { ajvDetails, compileSchema, type Validator } from './schema-checks.js';

/**
 * The pattern work one check or validation may do (ajv.ts, PatternMeter): about 0.1 s of the
 * schema worker's time at most with the costliest patterns measured (25 to 55 ns a step), while
 * a one-pass pattern (`^[a-zA-Z0-9_-]{1,256}$`) may test 2 million characters and one of 100
 * instructions 20,000.
 */
const VALIDATION_PATTERN_WORK = 2_000_000;
/** A compiled validator weighs about 22 times its schema's JSON (measured on ajv 8): 32 leaves room. */
const COMPILED_BYTES_PER_SCHEMA_BYTE = 32;
const COMPILED_BASE_BYTES = 64 * 1024;
/** A compiled RE2 instruction retains about 80 bytes (measured on re2js 2.10); 128 leaves room. */
const BYTES_PER_INSTRUCTION = 128;
const CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** What the worker answers for one job; engine.ts turns it into the API's errors. */
export type Outcome =
  | { kind: 'ok' }
  /** The schema is one Gantry does not evaluate; the details' fields are paths inside it. */
  | { kind: 'refused'; message: string; details: Detail[] }
  /** The value does not match; the details' fields are paths inside the value, from its root. */
  | { kind: 'invalid'; details: Detail[] }
  /** The value needs more pattern work than a validation may do. */
  | { kind: 'too-costly' }
  | { kind: 'too-deep' };

/**
 * Compiled validators, cached by the SHA-256 of the schema's JSON (refusals too), bounded by
 * count and by what each retains: the ajv code (estimated from the schema's size) and every
 * pattern's program and DFA budget (docs/connectors.md, "JSON Schema").
 */
export function createValidators() {
  const meter: PatternMeter = { remaining: 0 };
  const ajvs = ajvInstances(meter);
  const cache = new LRUCache<string, Validator | SchemaRefusal>({
    max: 2000,
    maxSize: CACHE_MAX_BYTES,
    sizeCalculation: (value, key) => {
      if (value instanceof SchemaRefusal) return 1024;
      let bytes = COMPILED_BASE_BYTES + COMPILED_BYTES_PER_SCHEMA_BYTE * Number(key.slice(0, key.indexOf(':')));
      for (const pattern of value.patterns.values()) bytes += pattern.program * BYTES_PER_INSTRUCTION + DFA_MAX_BYTES;
      return bytes;
    },
    ttl: 3_600_000,
  });

  function validator(text: string): Validator | SchemaRefusal {
    const bytes = Buffer.byteLength(text);
    // A stored schema arrives as text: the bound holds for it too.
    if (bytes > SCHEMA_MAX_BYTES)
      return new SchemaRefusal(`is larger than ${SCHEMA_MAX_BYTES / 1024} KiB`, [
        { field: '', message: `must be at most ${SCHEMA_MAX_BYTES} bytes as JSON`, type: 'jsonschema.size' },
      ]);
    const key = `${bytes}:${createHash('sha256').update(text).digest('base64url')}`;
    let found = cache.get(key);
    if (!found) {
      // The meta-schema's formats run on RE2 too: a compile gets a validation's work.
      meter.remaining = VALIDATION_PATTERN_WORK;
      try {
        found = compileSchema(ajvs, meter, JSON.parse(text), text);
      } catch (err) {
        if (!(err instanceof PatternWorkExceeded)) throw err;
        found = new SchemaRefusal('needs more pattern work to check than Gantry allows', [
          { field: '', message: 'its patterns are too costly to check', type: 'jsonschema.cost' },
        ]);
      }
      cache.set(key, found);
    }
    return found;
  }

  return {
    /** Whether Gantry evaluates the schema whose JSON is `schema`. */
    check(schema: string): Outcome {
      const found = validator(schema);
      return found instanceof SchemaRefusal ? refused(found) : { kind: 'ok' };
    },

    /** Validates the JSON `value` against the schema whose JSON is `schema`. */
    validate(schema: string, value: string): Outcome {
      const found = validator(schema);
      if (found instanceof SchemaRefusal) return refused(found);
      meter.remaining = VALIDATION_PATTERN_WORK;
      let valid: boolean;
      try {
        valid = found.validate(JSON.parse(value)) as boolean;
      } catch (err) {
        if (err instanceof PatternWorkExceeded) return { kind: 'too-costly' };
        if (err instanceof RangeError) return { kind: 'too-deep' };
        throw err;
      }
      return valid ? { kind: 'ok' } : { kind: 'invalid', details: ajvDetails(found.validate.errors, '') };
    },

    /**
     * What is held: cached validators (count, weighed bytes, bound), the worker's heap, and how
     * many schemas and code values the long-lived meta-schema Ajv retains (constant by design).
     */
    stats() {
      const meta = ajvs.meta() as unknown as {
        _cache: Map<unknown, unknown>;
        schemas: object;
        refs: object;
        scope: { _values: Record<string, Map<unknown, unknown>> };
      };
      const scopeValues = Object.values(meta.scope._values).reduce((n, m) => n + m.size, 0);
      return {
        cached: cache.size,
        cachedBytes: cache.calculatedSize,
        maxBytes: CACHE_MAX_BYTES,
        heapUsedBytes: getHeapStatistics().used_heap_size,
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

export type ValidatorStats = ReturnType<ReturnType<typeof createValidators>['stats']>;

const refused = (r: SchemaRefusal): Outcome => ({ kind: 'refused', message: r.message, details: r.details });
