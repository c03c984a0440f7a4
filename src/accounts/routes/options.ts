import Joi from 'joi';
import type { GantryRouteConfig } from '../../http/route-config.js';
import type { Request } from '@hapi/hapi';
import { id } from '../schemas.js';

/** Account routes accept enterprise API keys (acting as the key's owner). */
export const withKeys = (config: GantryRouteConfig) => ({ gantry: { ...config, apiKeys: true } });

export const accountParams = Joi.object({ accountId: id });
export const p = (request: Request) => request.params as Record<string, string>;

/** What account routes refuse (docs/accounts.md): not a member or role too low, unknown ids, state, suspension. */
export const ACCOUNT_ERRORS = ['FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'ACCOUNT_SUSPENDED'] as const;
