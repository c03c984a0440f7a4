/**
 * What the main thread knows of schemas before any compiler (engine.ts): a refusal and the
 * checks that need none.
 */
export const SCHEMA_MAX_BYTES = 64 * 1024;
export const SCHEMA_MAX_DEPTH = 32;

export type Detail = { field: string; message: string; type: string };

/** Why a schema is refused: the fields it names are paths inside the schema. */
export class SchemaRefusal {
  constructor(
    readonly message: string,
    readonly details: Detail[],
  ) {}
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
