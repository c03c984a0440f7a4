import Joi from 'joi';
import { CATEGORY_PATTERN, LIST_MAX_LIMIT, NOTIFICATION_STATUSES } from './service.js';

/** Path id: a malformed UUID is a 422 (docs/interface.md, Errors) (the kernel's default for path parameters). */
export const idParams = Joi.object({ id: Joi.string().guid().required() });

/**
 * Both listing styles on one endpoint: offset (limit, offset) or cursor (limit, cursor, or
 * paging=cursor for a first page). limit is 1-50 in both; out of range is a 400, never clamped.
 */
export const listQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(LIST_MAX_LIMIT),
  offset: Joi.number().integer().min(0),
  cursor: Joi.string().max(1024),
  paging: Joi.string().valid('offset', 'cursor'),
  status: Joi.string().valid(...NOTIFICATION_STATUSES),
  category: Joi.string().pattern(CATEGORY_PATTERN),
}).oxor('offset', 'cursor');
