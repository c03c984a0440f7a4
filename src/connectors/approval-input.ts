import { cutToFit, type InputCut } from './approval-input-cuts.js';

/** What an approver sees of a parked call's input: secrets masked, long parts shortened, no key hidden. */

/** The most JSON text of input an approver is shown (approval-input-cuts.ts shortens what is longer). */
export const APPROVAL_INPUT_MAX_CHARS = 16 * 1024;
const REDACTED = '[redacted]';
const MAX_DEPTH = 32;

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The schema and the subschemas it combines (allOf, anyOf, oneOf), which may each mark a field. */
function alternatives(schema: unknown, depth = 0): Schema[] {
  if (!isObject(schema) || depth > MAX_DEPTH) return [];
  const nested = ['allOf', 'anyOf', 'oneOf'].flatMap((k) =>
    Array.isArray(schema[k]) ? (schema[k] as unknown[]).flatMap((s) => alternatives(s, depth + 1)) : [],
  );
  return [schema, ...nested];
}

/** JSON Schema marks a value the server must not echo with writeOnly (2020-12 §9.4) or format password. */
const isSecret = (schemas: Schema[]) => schemas.some((s) => s.writeOnly === true || s.format === 'password');

function redact(schema: unknown, value: unknown, depth: number): unknown {
  const schemas = alternatives(schema);
  if (isSecret(schemas)) return REDACTED;
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    const items = schemas.map((s) => s.items).filter(isObject);
    return value.map((v) => redact(items.length > 0 ? { allOf: items } : undefined, v, depth + 1));
  }
  if (isObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => {
        const subs = schemas.flatMap((s) => {
          const props = isObject(s.properties) ? s.properties : {};
          if (Object.hasOwn(props, key)) return [props[key]];
          return isObject(s.additionalProperties) ? [s.additionalProperties] : [];
        });
        return [key, redact(subs.length > 0 ? { allOf: subs } : undefined, v, depth + 1)];
      }),
    );
  }
  return value;
}

export interface ApprovalInputView {
  input: unknown;
  /** Whether anything was shortened (inputCut lists what). */
  inputTruncated: boolean;
  inputCut: InputCut[];
}

/**
 * The input as the approver sees it: fields the tool's input schema marks writeOnly (or
 * format password) replaced by "[redacted]" ($ref is not followed); when its JSON is longer
 * than APPROVAL_INPUT_MAX_CHARS, long strings are shortened one by one, with a marker saying
 * how much was cut, so that every key stays in view (docs/connectors.md, Invocation and approvals).
 */
export function approvalInputView(inputSchema: unknown, input: unknown): ApprovalInputView {
  const fitted = cutToFit(redact(inputSchema, input, 0), APPROVAL_INPUT_MAX_CHARS);
  return { input: fitted.input, inputTruncated: fitted.cuts.length > 0, inputCut: fitted.cuts };
}
