import type { ErrorObject, ValidateFunction } from 'ajv';
import { patternKey, re2, type AjvInstances, type CompiledPatterns, type PatternMeter } from './ajv.js';
import { patternCost } from './pattern-cost.js';
import { SCHEMA_MAX_DEPTH, SchemaRefusal, type Detail } from './refusals.js';

/**
 * Which schemas Gantry evaluates (docs/connectors.md, "JSON Schema"): at most SCHEMA_MAX_BYTES
 * serialized, SCHEMA_MAX_NODES objects and SCHEMA_MAX_DEPTH deep, so compiling one is bounded;
 * every pattern expressible in RE2 and within its program bound (pattern-cost.ts), at most
 * SCHEMA_MAX_PATTERNS of them and SCHEMA_MAX_PROGRAM instructions in all; valid against its
 * meta-schema.
 *
 * Objects in a schema: ajv's compile time grows with them (up to about 0.5 ms each).
 */
const SCHEMA_MAX_NODES = 500;
/** Patterns (`pattern`, `patternProperties` keys) in one schema, and their programs' sum. */
const SCHEMA_MAX_PATTERNS = 64;
const SCHEMA_MAX_PROGRAM = 10_000;

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

const SKIP_VALUES = new Set(['enum', 'const', 'default', 'examples']);

/**
 * Checks the size, depth and every pattern of a schema before ajv sees it, so a refusal names
 * the path of the offending keyword (ajv's compile errors name none). The patterns are
 * compiled here, once, for ajv to reuse (`patterns`), and only once their cost is known.
 */
function inspect(schema: unknown, meter: PatternMeter, patterns: CompiledPatterns): Detail[] {
  const out: Detail[] = [];
  let nodes = 0;
  let program = 0;
  const tryRe2 = (pattern: string, field: string) => {
    const refuse = (message: string) => out.push({ field, message, type: 'jsonschema.pattern' });
    const key = patternKey(pattern, 'u');
    if (patterns.has(key)) return;
    if (patterns.size === SCHEMA_MAX_PATTERNS)
      return refuse(`is one pattern more than the ${SCHEMA_MAX_PATTERNS} a schema may have`);
    const cost = patternCost(pattern);
    if ('refused' in cost) return refuse(cost.refused);
    if (program + cost.program > SCHEMA_MAX_PROGRAM)
      return refuse(`takes the schema's patterns past ${SCHEMA_MAX_PROGRAM} RE2 instructions in all`);
    program += cost.program;
    try {
      patterns.set(key, re2(pattern, 'u', meter));
    } catch (err) {
      refuse(`is not supported: ${(err as Error).message} (RE2 syntax: no lookarounds or backreferences)`);
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

/** A compiled validator, and the patterns it holds (what it weighs: validators.ts). */
export interface Validator {
  validate: ValidateFunction;
  patterns: CompiledPatterns;
}

/** The validator of a schema (whose JSON is `text`), or why it is refused. */
export function compileSchema(
  ajvs: AjvInstances,
  meter: PatternMeter,
  schema: unknown,
  text: string,
): Validator | SchemaRefusal {
  // Size, depth and patterns first: the meta-schema check recurses as deep as the schema does.
  const patterns: CompiledPatterns = new Map();
  const problems = inspect(schema, meter, patterns);
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
    return { validate: ajvs.fresh(patterns).compile(JSON.parse(text) as object), patterns };
  } catch (err) {
    return new SchemaRefusal(`is not a valid JSON Schema: ${(err as Error).message}`, [
      { field: '', message: (err as Error).message, type: 'jsonschema.compile' },
    ]);
  }
}
