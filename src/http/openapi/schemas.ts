import type { Schema } from 'joi';
import parse from 'joi-to-json';

type JsonSchema = Record<string, unknown>;

/**
 * A joi schema as OpenAPI 3.1 (JSON Schema 2020-12) through joi-to-json, the converter kept
 * up with joi's majors (docs/openapi.md). Named joi schemas (`.id()`) land in `shared`.
 */
export function toJsonSchema(schema: Schema, shared: Record<string, JsonSchema>): JsonSchema {
  const converted = parse(schema, 'open-api-3.1', shared) as JsonSchema & { schemas?: Record<string, JsonSchema> };
  const { schemas, ...rest } = converted;
  if (schemas) Object.assign(shared, schemas);
  return rest;
}

/** The envelope's `meta` on success: requestId and durationMs, then the route's own fields. */
export function successEnvelope(data: JsonSchema, meta: JsonSchema | undefined): JsonSchema {
  const metaProperties = (meta?.properties as Record<string, JsonSchema> | undefined) ?? {};
  const metaRequired = (meta?.required as string[] | undefined) ?? [];
  return {
    type: 'object',
    properties: {
      data,
      meta: {
        type: 'object',
        properties: {
          requestId: { type: 'string' },
          durationMs: { type: 'number', minimum: 0 },
          ...metaProperties,
        },
        required: ['requestId', 'durationMs', ...metaRequired],
        additionalProperties: false,
      },
      error: { type: 'null' },
    },
    required: ['data', 'meta', 'error'],
    additionalProperties: false,
  };
}

/** docs/interface.md, Envelope: every error of a JSON endpoint. */
export const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  properties: {
    data: { type: 'null' },
    error: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        details: {},
      },
      required: ['code', 'message'],
      additionalProperties: false,
    },
    meta: {
      type: 'object',
      properties: { requestId: { type: 'string' }, durationMs: { type: 'number', minimum: 0 } },
      required: ['requestId', 'durationMs'],
      additionalProperties: false,
    },
  },
  required: ['data', 'error', 'meta'],
  additionalProperties: false,
};

/** The error envelope narrowed to the codes one status of one route can carry. */
export const errorEnvelopeWith = (codes: readonly string[]): JsonSchema => ({
  allOf: [
    { $ref: '#/components/schemas/ErrorEnvelope' },
    { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: [...codes] } } } } },
  ],
});
