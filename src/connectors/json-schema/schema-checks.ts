import type { ErrorObject, ValidateFunction } from 'ajv';
import { re2, type AjvInstances } from './ajv.js';

/**
 * Which schemas Gantry evaluates (docs/connectors.md, "JSON Schema"): at most SCHEMA_MAX_BYTES
 * serialized, SCHEMA_MAX_NODES objects and SCHEMA_MAX_DEPTH deep, so compiling one is bounded;
 * every pattern expressible in RE2; valid against its meta-schema.
 */
const SCHEMA_MAX_BYTES = 64 * 1024;
const SCHEMA_MAX_DEPTH = 32;
/** Objects in a schema: ajv's compile time grows with them (up to about 0.5 ms each). */
const SCHEMA_MAX_NODES = 500;

export type Detail = { field: string; message: string; type: string };

/** Paths of ajv errors as error.details entries. */
export function ajvDetails(errors: ErrorObject[] | null | undefined, root: string): Detail[] {
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

/** Why a schema is refused: the fields it names are paths inside the schema. */
export class SchemaRefusal {
  constructor(
    readonly message: string,
    readonly details: Detail[],
  ) {}
}

export type Compiled = ValidateFunction | SchemaRefusal;

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

/** A schema's JSON text and its size in bytes, or why it is refused before any closer look. */
export function schemaText(schema: unknown): { text: string; bytes: number } | SchemaRefusal {
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
  return { text, bytes };
}

/** The validator of a schema (whose JSON is `text`), or why it is refused. */
export function compileSchema(ajvs: AjvInstances, schema: unknown, text: string): Compiled {
  // Size and depth first: the meta-schema check recurses as deep as the schema does.
  const problems = inspect(schema);
  if (problems.length > 0)
    return new SchemaRefusal(
      problems.some((p) => p.type === 'jsonschema.pattern')
        ? 'uses a pattern Gantry does not evaluate'
        : 'is too large or too deeply nested',
      problems,
    );
  const meta = ajvs.meta();
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
    return ajvs.fresh().compile(JSON.parse(text) as object);
  } catch (err) {
    return new SchemaRefusal(`is not a valid JSON Schema: ${(err as Error).message}`, [
      { field: '', message: (err as Error).message, type: 'jsonschema.compile' },
    ]);
  }
}
