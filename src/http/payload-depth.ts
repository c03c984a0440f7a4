import type { Request } from '@hapi/hapi';
import { DomainError } from './errors.js';

/**
 * How deep a request body may nest objects and arrays (the body itself is level 1). No API
 * body needs more (a JSON Schema for a tool is a handful of levels); past it, recursive code
 * further on (JSON.stringify of a stored config, schema validators, the presenters) would run
 * out of stack and answer 500. docs/kernel.md, Errors.
 */
const MAX_PAYLOAD_DEPTH = 64;

/** Whether a parsed body nests deeper than `max`; iterative, so any depth is measured safely. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node as object);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Refuses a too-deep body before validation and the handler, on every route: 400
 * VALIDATION_FAILED, in the route's own error format when it has one. Only parsed bodies (plain
 * objects and arrays) are walked; raw buffers and streams are the route's business.
 */
export function checkPayloadDepth(request: Request): void {
  const payload = request.payload as unknown;
  if (typeof payload !== 'object' || payload === null || Buffer.isBuffer(payload)) return;
  const proto = Object.getPrototypeOf(payload);
  if (!Array.isArray(payload) && proto !== Object.prototype && proto !== null) return;
  if (nestedDeeperThan(payload, MAX_PAYLOAD_DEPTH)) {
    throw new DomainError('VALIDATION_FAILED', `The request body is nested deeper than ${MAX_PAYLOAD_DEPTH} levels`);
  }
}
