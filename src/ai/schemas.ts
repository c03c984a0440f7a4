import Joi from 'joi';

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
