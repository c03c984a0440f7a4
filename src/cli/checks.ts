import type Joi from 'joi';
import { DomainError } from '../http/errors.js';
import type { AnswerCheck } from './io.js';

/**
 * Answer checks built from the services' own rules, never restated here (STYLE.md, the CLI
 * never re-checks a rule): a prompt refuses what the service would refuse after all answers.
 */

/** A rule that throws its refusal (a DomainError): the refusal's message is the problem. */
export const refusalOf =
  (rule: (answer: string) => unknown): AnswerCheck =>
  async (answer) => {
    try {
      await rule(answer);
      return null;
    } catch (err) {
      if (err instanceof DomainError) return err.message;
      throw err;
    }
  };

/** A field of a joi schema the service validates with (`schema.extract(field)`). */
export const fieldOf =
  (schema: Joi.ObjectSchema, field: string): AnswerCheck =>
  (answer) =>
    schema.extract(field).label(field).validate(answer).error?.message ?? null;
