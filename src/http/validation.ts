import type { ValidationErrorItem } from 'joi';

/** One entry of `error.details` for a failing field (docs/kernel.md). */
export interface FieldDetail {
  field: string;
  message: string;
  type: string;
}

/**
 * joi's failures as `error.details` entries: the dotted path, the message without joi's
 * quotes, and joi's error type. The one mapping for the kernel's failAction and the services
 * that validate on their own (CLI callers).
 */
export function joiDetails(
  items: readonly Pick<ValidationErrorItem, 'path' | 'message' | 'type'>[] | undefined,
): FieldDetail[] {
  return (items ?? []).map((d) => ({ field: d.path.join('.'), message: d.message.replace(/"/g, ''), type: d.type }));
}
