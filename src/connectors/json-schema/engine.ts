import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { badRequest, DomainError } from '../../http/errors.js';
import { ajvInstances } from './ajv.js';
import { ajvDetails, type Compiled, compileSchema, type Detail, SchemaRefusal, schemaText } from './schema-checks.js';

/**
 * JSON Schema for connector configs and tool inputs (ajv 8 + ajv-formats), made safe for schemas
 * written by any user or by an upstream MCP server (docs/connectors.md, "JSON Schema"):
 * - every `pattern`, `patternProperties` key and format regex runs on RE2 (re2js), whose matching
 *   is linear in the input, so no pattern can backtrack for hours; patterns RE2 cannot express
 *   (lookarounds, backreferences) are refused (ajv.ts, schema-checks.ts);
 * - a schema's size, object count and depth are bounded, so compiling it is bounded
 *   (schema-checks.ts); a validated value is at most VALUE_MAX_BYTES;
 * - compiled validators live in one bounded cache sized by count and by an estimate of their
 *   memory, and ajv itself keeps nothing: each schema is compiled by a throwaway Ajv instance,
 *   because an Ajv instance retains every schema it compiled (its `_cache` and its code scope).
 */
const VALUE_MAX_BYTES = 256 * 1024;
/** A compiled validator weighs about 22 times its schema's JSON (measured on ajv 8): 32 leaves room. */
const COMPILED_BYTES_PER_SCHEMA_BYTE = 32;
const COMPILED_BASE_BYTES = 64 * 1024;
const CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** The one JSON Schema engine of the connectors domain (configSchema, inputSchema, outputSchema). */
export function createJsonSchemaEngine() {
  const ajvs = ajvInstances();

  const compiled = new LRUCache<string, Compiled>({
    max: 2000,
    maxSize: CACHE_MAX_BYTES,
    sizeCalculation: (value, key) =>
      value instanceof SchemaRefusal
        ? 1024
        : COMPILED_BASE_BYTES + COMPILED_BYTES_PER_SCHEMA_BYTE * Number(key.slice(0, key.indexOf(':'))),
    ttl: 3_600_000,
  });

  /** The compiled validator of a schema, or why it is refused (cached either way). */
  function validator(schema: unknown): Compiled {
    const json = schemaText(schema);
    if (json instanceof SchemaRefusal) return json;
    const { text, bytes } = json;
    const key = `${bytes}:${createHash('sha256').update(text).digest('base64url')}`;
    let fn = compiled.get(key);
    if (!fn) {
      fn = compileSchema(ajvs, schema, text);
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
      const meta = ajvs.meta() as unknown as {
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
