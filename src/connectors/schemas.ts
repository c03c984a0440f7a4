import Joi from 'joi';
import { offsetQuery } from '../http/pagination.js';
import { CRED_TYPES } from './types.js';
import { CREDENTIAL_MODES } from './user-links.js';

const id = Joi.string().guid().required();
const key = Joi.string().pattern(/^[a-z0-9][a-z0-9_-]{1,62}$/);
const jsonObject = Joi.object().unknown(true);
/** An instance's own prefix for its tools' MCP names ('' = none, null = derived; docs/connectors.md). */
const toolPrefix = Joi.string()
  .pattern(/^[A-Za-z0-9_.-]{0,24}$/)
  .allow('', null);
/** Calls per minute per tool; null = no limit. */
/** docs/connectors.md, Credential modes. */
const credentialMode = Joi.string().valid(...CREDENTIAL_MODES);
const rateLimitRpm = Joi.number().integer().min(1).max(100_000).allow(null);
const translations = Joi.object().pattern(
  Joi.string().max(35),
  Joi.object({ displayName: Joi.string().max(255), description: Joi.string().max(4000) }),
);

export const schemas = {
  instanceParams: Joi.object({ id }),
  toolParams: Joi.object({ id, toolId: id }),
  approvalParams: Joi.object({ approvalId: id }),
  callbackParams: Joi.object({ connectorKey: key.required() }),
  listQuery: Joi.object(offsetQuery({ max: 100 })),
  toolsQuery: Joi.object({ locale: Joi.string().pattern(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/) }),
  approvalsQuery: Joi.object({ status: Joi.string().valid('pending', 'approved', 'rejected', 'failed') }),
  /** A client registered with an MCP server's authorization server (docs/connectors.md); all optional. */
  oauthInitiate: Joi.object({
    clientId: Joi.string().min(1).max(512),
    clientSecret: Joi.string().min(1).max(2048),
    tokenEndpointAuthMethod: Joi.string().valid('client_secret_basic', 'client_secret_post', 'none'),
    scopes: Joi.array().items(Joi.string().min(1).max(256)).max(50),
  }).allow(null),
  callbackQuery: Joi.object({
    code: Joi.string().max(4096),
    state: Joi.string().max(512),
    error: Joi.string().max(256),
    error_description: Joi.string().max(2048),
  }).unknown(true),
  createDefinition: Joi.object({
    key: key.required(),
    name: Joi.string().trim().min(1).max(255).required(),
    description: Joi.string().max(2000).allow(null),
    credType: Joi.string()
      .valid(...CRED_TYPES.filter((t) => t !== 'oauth2'))
      .allow(null),
    configSchema: jsonObject,
  }),
  createInstance: Joi.object({
    connectorKey: Joi.string().max(63).required(),
    displayName: Joi.string().trim().min(1).max(255).required(),
    config: jsonObject,
    toolPrefix,
    credentialMode,
  }),
  updateInstance: Joi.object({
    displayName: Joi.string().trim().min(1).max(255),
    config: jsonObject,
    enabled: Joi.boolean(),
    toolPrefix,
    credentialMode,
  }),
  storeCredentials: Joi.object({
    credType: Joi.string()
      .valid(...CRED_TYPES)
      .required(),
    credentials: jsonObject.required(),
    scopes: Joi.array().items(Joi.string().max(255)).max(100),
  }),
  createTool: Joi.object({
    toolKey: Joi.string()
      .pattern(/^[A-Za-z0-9_.:-]{1,128}$/)
      .required(),
    displayName: Joi.string().trim().min(1).max(255).required(),
    description: Joi.string().max(4000).allow(null),
    inputSchema: jsonObject.required(),
    outputSchema: jsonObject.required(),
    requiresApproval: Joi.boolean().default(false),
    rateLimitRpm,
    translations,
  }),
  toggleTool: Joi.object({ enabled: Joi.boolean(), requiresApproval: Joi.boolean(), rateLimitRpm }).or(
    'enabled',
    'requiresApproval',
    'rateLimitRpm',
  ),
  invokeTool: Joi.object({ input: jsonObject.default({}) }),
};
