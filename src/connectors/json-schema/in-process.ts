import { LRUCache } from 'lru-cache';
import { ajvInstances, type PatternMeter } from './ajv.js';
import { SchemaRefusal } from './refusals.js';
import { ajvDetails, compileSchema, type Validator } from './schema-checks.js';
import type { Outcome } from './validators.js';

/**
 * Small schemas made only of keywords whose checks are linear in the value, validated on the
 * main thread (docs/connectors.md, "JSON Schema"): a tool call's arguments against such a
 * schema cost microseconds here and a round trip to the schema worker otherwise. Everything
 * else (patterns, formats, uniqueItems, references, larger schemas or values) stays the
 * worker's, as do refusals: a schema this path would refuse goes there, and is refused there.
 *
 * The bounds keep the worst case near a millisecond: the value is at most LOCAL_VALUE_MAX_BYTES,
 * and each of its nodes meets at most LOCAL_SCHEMA_MAX_NODES subschemas (combinators included).
 */
const LOCAL_SCHEMA_MAX_BYTES = 4 * 1024;
const LOCAL_SCHEMA_MAX_NODES = 64;
const LOCAL_SCHEMA_MAX_DEPTH = 8;
const LOCAL_VALUE_MAX_BYTES = 16 * 1024;
/** Compiled local validators kept (each weighs a few KiB: its schema is at most 4 KiB). */
const LOCAL_CACHE_MAX = 500;

/** Keywords whose work is not linear in the value (regular expressions, pairwise comparison) or that reach other schemas. */
const WORKER_KEYWORDS = new Set([
  'pattern',
  'patternProperties',
  'format',
  'uniqueItems',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
  '$defs',
  'definitions',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$recursiveAnchor',
  'contentSchema',
]);
/** Keywords whose values are data, not subschemas: their keys and contents are not walked. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

/** Whether a parsed schema is small and linear enough for the main thread. */
function isLocal(schema: unknown): boolean {
  let nodes = 0;
  const walk = (node: unknown, depth: number): boolean => {
    if (typeof node !== 'object' || node === null) return true;
    if (depth > LOCAL_SCHEMA_MAX_DEPTH) return false;
    if (Array.isArray(node)) return node.every((item) => walk(item, depth + 1));
    if (++nodes > LOCAL_SCHEMA_MAX_NODES) return false;
    for (const [key, value] of Object.entries(node)) {
      // A property named like a keyword sends the schema to the worker too: the walk does not
      // tell names from keywords, and erring that way costs only a round trip.
      if (WORKER_KEYWORDS.has(key)) return false;
      if (!DATA_KEYWORDS.has(key) && !walk(value, depth + 1)) return false;
    }
    return true;
  };
  return walk(schema, 0);
}

/** The main thread's validators, built on the first local validation (ajv loads then). */
export function createInProcessValidators() {
  // Local schemas have no patterns and no formats: nothing ever charges the meter.
  const meter: PatternMeter = { remaining: 0 };
  let ajvs: ReturnType<typeof ajvInstances> | null = null;
  /** By schema text: its validator, or null when the schema is the worker's. */
  const cache = new LRUCache<string, Validator | 'worker'>({ max: LOCAL_CACHE_MAX });

  function validatorOf(text: string): Validator | null {
    let found = cache.get(text);
    if (found === undefined) {
      found = 'worker';
      if (text.length <= LOCAL_SCHEMA_MAX_BYTES) {
        const schema = JSON.parse(text) as unknown;
        if (isLocal(schema)) {
          ajvs ??= ajvInstances(meter);
          const compiled = compileSchema(ajvs, meter, schema, text);
          if (!(compiled instanceof SchemaRefusal)) found = compiled;
        }
      }
      cache.set(text, found);
    }
    return found === 'worker' ? null : found;
  }

  return {
    /**
     * The outcome of validating `value` (whose JSON is `valueBytes` long) against the schema
     * whose JSON is `schema`, or null when that is the worker's to do.
     */
    validate(schema: string, value: unknown, valueBytes: number): Outcome | null {
      if (valueBytes > LOCAL_VALUE_MAX_BYTES) return null;
      const validator = validatorOf(schema);
      if (!validator) return null;
      let valid: boolean;
      try {
        valid = validator.validate(value) as boolean;
      } catch (err) {
        if (err instanceof RangeError) return { kind: 'too-deep' };
        throw err;
      }
      return valid ? { kind: 'ok' } : { kind: 'invalid', details: ajvDetails(validator.validate.errors, '') };
    },
  };
}
