import Joi from 'joi';
import { content, envelope, ok, shape, timestamp } from '../http/openapi/declare.js';
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

/** The Notification (docs/interface.md, Resources), as presenters.ts writes it. */
const notification = shape({
  id: Joi.string(),
  title: Joi.string(),
  body: Joi.string(),
  icon: Joi.string().allow(null),
  actionUrl: Joi.string().allow(null),
  category: Joi.string(),
  priority: Joi.string().valid('low', 'normal', 'high'),
  status: Joi.string().valid(...NOTIFICATION_STATUSES),
  readAt: timestamp().allow(null),
  expiresAt: timestamp().allow(null),
  createdAt: timestamp(),
});

/** Either paging style: offset pages add total and offset; both carry the cursor that continues. */
const listMeta = shape({
  limit: Joi.number().integer(),
  hasNextPage: Joi.boolean(),
  nextCursor: Joi.string().allow(null),
  total: Joi.number().integer().optional(),
  offset: Joi.number().integer().optional(),
});

export const responses = {
  list: { 200: envelope(Joi.array().items(notification), listMeta) },
  unreadCount: ok(shape({ count: Joi.number().integer().min(0) })),
  read: ok(shape({ status: Joi.string().valid('read') })),
  archived: ok(shape({ status: Joi.string().valid('archived') })),
  allRead: ok(shape({ status: Joi.string().valid('all_read') })),
  stream: { 200: content('text/event-stream', 'Server-Sent Events: one event per notification change') },
};
