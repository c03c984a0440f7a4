import Joi from 'joi';
import {
  created,
  envelope,
  jsonBody,
  offsetList,
  ok,
  page,
  redirect,
  shape,
  timestamp,
} from '../http/openapi/declare.js';
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
  /** Exactly `true` releases the names agents called the instance's tools by (owner/admin; docs/connectors.md, Tool names). */
  deleteInstanceQuery: Joi.object({ releaseToolNames: Joi.string().valid('true', 'false').default('false') }),
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
  /** `detectedAt`: the changed definition the caller reviewed (409 when a later sync replaced it). */
  acceptDefinition: Joi.object({ detectedAt: Joi.string().isoDate() }).allow(null),
};

const instance = shape({
  id: Joi.string(),
  connectorKey: Joi.string(),
  displayName: Joi.string(),
  status: Joi.string().valid('pending_auth', 'active', 'error', 'inactive'),
  enabled: Joi.boolean(),
  config: jsonObject,
  toolPrefix: Joi.string().allow(null, ''),
  credentialMode: Joi.string().valid(...CREDENTIAL_MODES),
  lastHealthCheck: timestamp().allow(null),
  healthMessage: Joi.string().allow(null, ''),
  createdAt: timestamp(),
  updatedAt: timestamp(),
});
const tool = shape({
  id: Joi.string(),
  connectorKey: Joi.string(),
  toolKey: Joi.string(),
  displayName: Joi.string(),
  description: Joi.string().allow(null, ''),
  inputSchema: jsonObject,
  outputSchema: jsonObject,
  requiresApproval: Joi.boolean(),
  rateLimitRpm: Joi.number().allow(null),
  isActive: Joi.boolean(),
  source: Joi.string().valid('auto_discovered', 'manual'),
  definitionStatus: Joi.string().valid('accepted', 'changed'),
  pendingDefinition: shape({
    title: Joi.string(),
    description: Joi.string().allow(null, ''),
    inputSchema: jsonObject,
    outputSchema: jsonObject,
    annotations: jsonObject.allow(null),
    detectedAt: timestamp(),
    changes: Joi.array().items(shape({ path: Joi.string(), before: Joi.any(), after: Joi.any() })),
  }).allow(null),
});
const approval = shape({
  id: Joi.string(),
  mode: Joi.string(),
  instanceId: Joi.string(),
  toolId: Joi.string(),
  targetOrigin: Joi.string().allow(null),
  input: Joi.any().allow(null),
  inputTruncated: Joi.boolean(),
  inputCut: Joi.array().items(
    shape({
      path: Joi.string().allow(''),
      kind: Joi.string().valid('string', 'key', 'array', 'object'),
      originalLength: Joi.number().integer(),
    }),
  ),
  status: Joi.string(),
  requestedBy: Joi.string().allow(null),
  clientId: Joi.string().allow(null),
  expiresAt: timestamp().allow(null),
  consumedAt: timestamp().allow(null),
  decidedBy: Joi.string().allow(null),
  decidedAt: timestamp().allow(null),
  result: Joi.any().allow(null),
  createdAt: timestamp(),
});
const definition = shape({
  key: Joi.string(),
  name: Joi.string(),
  description: Joi.string().allow(null, ''),
  authKind: Joi.string(),
  credType: Joi.string().allow(null),
  adapter: Joi.string().allow(null),
  oauth: shape({
    authorizeUrl: Joi.string().allow(null, ''),
    tokenUrl: Joi.string().allow(null, ''),
    checkUrl: Joi.string().allow(null, ''),
    scopes: Joi.array().items(Joi.string()),
    pkce: Joi.boolean(),
    configured: Joi.boolean(),
  }).allow(null),
  configSchema: jsonObject.allow(null),
  isSystem: Joi.boolean(),
  workspaceId: Joi.string().allow(null),
});
const credentialRecord = shape({
  id: Joi.string(),
  instanceId: Joi.string(),
  credType: Joi.string(),
  rotatedAt: timestamp(),
});
const invocation = (status: string) =>
  shape({
    status: Joi.valid(status),
    approval: status === 'completed' ? Joi.valid(null) : approval,
    result: Joi.any(),
  });

/** docs/connectors.md: what each connector route answers. */
export const responses = {
  definitions: ok(Joi.array().items(definition)),
  definitionCreated: created(definition),
  instances: offsetList(instance),
  instanceCreated: created(instance),
  instance: ok(instance),
  tested: ok(shape({ healthy: Joi.boolean(), message: Joi.string().allow(null, ''), latencyMs: Joi.number() })),
  tools: ok(Joi.array().items(tool)),
  toolCreated: created(tool),
  tool: ok(tool),
  toolSettings: ok(
    shape({
      id: Joi.string(),
      isActive: Joi.boolean(),
      requiresApproval: Joi.boolean(),
      rateLimitRpm: Joi.number().allow(null),
    }),
  ),
  invoked: {
    200: envelope(invocation('completed'), undefined, 'The tool ran: its result'),
    202: envelope(invocation('pending_approval'), undefined, 'The call waits for an approval'),
  },
  approvals: ok(Joi.array().items(approval)),
  approval: ok(approval),
  credentialRecord: ok(credentialRecord),
  credentialStatus: ok(
    shape({
      configured: Joi.boolean(),
      credType: Joi.string().allow(null),
      expiresAt: timestamp().allow(null),
      scopes: Joi.array().items(Joi.string()).allow(null),
      // A per_user instance answers the caller's own link (docs/connectors.md, Credential modes).
      credentialMode: Joi.valid('per_user').optional(),
      relinkRequired: Joi.boolean().optional(),
      relinkReason: Joi.string().allow(null).optional(),
    }),
  ),
  oauthInitiated: ok(shape({ redirectUrl: Joi.string(), state: Joi.string() })),
  clientMetadata: {
    200: jsonBody(
      Joi.object({
        client_id: Joi.string().required(),
        client_name: Joi.string(),
        client_uri: Joi.string(),
        redirect_uris: Joi.array().items(Joi.string()).required(),
        grant_types: Joi.array().items(Joi.string()),
        response_types: Joi.array().items(Joi.string()),
        token_endpoint_auth_method: Joi.string(),
      }),
      "Gantry's OAuth Client ID Metadata Document, for remote MCP servers' authorization servers",
    ),
  },
  callback: {
    302: redirect('To the connector settings page, with status=success or status=error&reason=CODE'),
    303: redirect(
      'Finished in another browser than the one that started the link: to the page where the member who started it confirms (/connectors/link/{hold})',
    ),
  },
  settingsPage: { 200: page('States the outcome of a connector OAuth link') },
};
