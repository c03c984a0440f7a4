import Joi from 'joi';
import { content, created, ok, shape, timestamp } from '../http/openapi/declare.js';
import { PROVIDER_NAMES } from './providers/types.js';

/** Per-message cap; the service also caps the total (MAX_TOTAL_CHARS). */
const MAX_MESSAGE_CHARS = 32_000;
const MAX_MESSAGES = 100;
const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const runPayload = Joi.object({
  messages: Joi.array()
    .items(
      Joi.object({
        role: Joi.string().valid('system', 'user', 'assistant').required(),
        content: Joi.string().min(1).max(MAX_MESSAGE_CHARS).required(),
      }),
    )
    .min(1)
    .max(MAX_MESSAGES)
    .required(),
  sessionId: Joi.string().pattern(SESSION_ID),
  model: Joi.string().pattern(/^[A-Za-z0-9._:/@-]{1,200}$/),
  // true: answer as Server-Sent Events (docs/ai.md, Streamed runs).
  stream: Joi.boolean(),
});

export const runParams = Joi.object({
  id: Joi.string()
    .guid({ version: ['uuidv4', 'uuidv7'] })
    .required(),
});
export const sessionParams = Joi.object({ sessionId: Joi.string().pattern(SESSION_ID).required() });

const run = shape({
  id: Joi.string(),
  sessionId: Joi.string(),
  accountId: Joi.string(),
  userId: Joi.string(),
  status: Joi.string(),
  provider: Joi.string().allow(null),
  model: Joi.string().allow(null),
  requestedModel: Joi.string().allow(null),
  message: shape({ role: Joi.string().valid('assistant'), content: Joi.string().allow('') }).allow(null),
  usage: shape({ inputTokens: Joi.number(), outputTokens: Joi.number(), totalTokens: Joi.number() }),
  estimatedCostUsd: Joi.number().allow(null),
  chargedUsd: Joi.number(),
  attempts: Joi.array().items(
    shape({
      provider: Joi.string(),
      model: Joi.string(),
      outcome: Joi.string(),
      httpStatus: Joi.number().integer().allow(null),
      latencyMs: Joi.number().allow(null),
    }),
  ),
  errorCode: Joi.string().allow(null),
  startedAt: timestamp(),
  completedAt: timestamp().allow(null),
  durationMs: Joi.number().allow(null),
  providerLatencyMs: Joi.number().allow(null),
});

/** docs/ai.md: what each AI route answers. */
export const responses = {
  runCreated: {
    ...created(run),
    200: content(
      'text/event-stream',
      'stream: true: the text as it comes, then the run record (docs/ai.md, Streamed runs)',
    ),
  },
  run: ok(run),
  rateLimit: ok(
    shape({ limit: Joi.number(), remaining: Joi.number(), resetsAt: timestamp(), scope: Joi.valid('account') }),
  ),
  modelsHealth: ok(
    Joi.array().items(
      shape({
        provider: Joi.string().valid(...PROVIDER_NAMES),
        status: Joi.string().valid('healthy', 'degraded', 'unavailable'),
        circuitState: Joi.string().valid('closed', 'half-open', 'open').allow(null),
        lastCheckedAt: timestamp().allow(null),
      }),
    ),
  ),
  sessionUsage: ok(
    shape({
      sessionId: Joi.string(),
      totalInputTokens: Joi.number(),
      totalOutputTokens: Joi.number(),
      totalTokens: Joi.number(),
      estimatedCostUsd: Joi.number().allow(null),
      runCount: Joi.number(),
    }),
  ),
  cacheStats: ok(
    shape({
      cachedLayers: Joi.number().integer(),
      layers: Joi.array().items(Joi.string().valid('preferences', 'persona', 'twin', 'session', 'memory')),
    }),
  ),
};
