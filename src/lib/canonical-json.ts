import { sha256Hex } from './crypto.js';

/** JSON with object keys sorted at every level, so equal arguments always give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The SHA-256 (hex) of a tool call's canonical arguments: what an approval binds and the audit log
 * keeps instead of the arguments.
 */
export const argumentsDigest = (args: Record<string, unknown>): string => sha256Hex(canonicalJson(args));
