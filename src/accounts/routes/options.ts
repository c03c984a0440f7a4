import Joi from 'joi';
import type { Request } from '@hapi/hapi';
import { id } from '../schemas.js';

/** Account routes accept enterprise API keys (acting as the key's owner). */
export const withKeys = { gantry: { apiKeys: true } };

export const accountParams = Joi.object({ accountId: id });
export const p = (request: Request) => request.params as Record<string, string>;
