import Joi from 'joi';
import { UPTIME_WINDOWS } from './rules.js';

export const slugParams = Joi.object({ slug: Joi.string().max(128).required() });
export const idParams = Joi.object({ id: Joi.string().guid().required() });
/** YYYY-MM-DD and a real calendar date; anything else is a 400. */
export const dateParams = Joi.object({
  date: Joi.string()
    .pattern(/^\d{4}-\d{2}-\d{2}$/)
    .custom((value: string, helpers) =>
      new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) === value ? value : helpers.error('any.invalid'),
    )
    .required(),
});
export const windowParams = Joi.object({
  window: Joi.string()
    .valid(...UPTIME_WINDOWS)
    .required(),
});
// Unknown query keys pass (cache busters from proxies); the answer does not depend on them.
export const componentsQuery = Joi.object({ serviceSlug: Joi.string().max(128) }).unknown(true);
export const incidentsQuery = Joi.object({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
}).unknown(true);
