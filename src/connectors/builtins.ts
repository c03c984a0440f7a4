import type { Kernel } from '../kernel.js';
import type { Definition } from './types.js';

const MCP_CONFIG_SCHEMA = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 },
    // Header names that carry credentials are refused by the service (credentialHeaderDetails).
    headers: { type: 'object', maxProperties: 32, additionalProperties: { type: 'string', maxLength: 4096 } },
  },
};

export const EMPTY_CONFIG_SCHEMA = { type: 'object', additionalProperties: true, maxProperties: 64 };

/** Built-in OAuth connectors; endpoints and client come from configuration (GANTRY_CONNECTOR_<KEY>_*). */
const OAUTH_BUILTINS = [
  {
    key: 'github',
    name: 'GitHub',
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    checkUrl: 'https://api.github.com/user',
    scopes: ['repo', 'read:user'],
    pkce: true,
  },
  {
    key: 'google',
    name: 'Google',
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    checkUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    scopes: ['openid', 'email'],
    pkce: true,
  },
  {
    key: 'slack',
    name: 'Slack',
    authorizeUrl: 'https://slack.com/oauth/v2/authorize',
    tokenUrl: 'https://slack.com/api/oauth.v2.access',
    checkUrl: 'https://slack.com/api/auth.test',
    scopes: ['channels:read', 'chat:write'],
    pkce: false,
  },
];

export function builtinDefinitions(kernel: Kernel): Definition[] {
  const providers = kernel.config.connectorProviders;
  return [
    {
      key: 'mcp-generic',
      name: 'Generic MCP server',
      description: 'Any MCP tool server reachable over Streamable HTTP (protocol 2025-11-25 or 2026-07-28)',
      authKind: 'none',
      credType: null,
      adapter: 'mcp',
      oauth: null,
      configSchema: MCP_CONFIG_SCHEMA,
      isSystem: true,
      workspaceId: null,
    },
    ...OAUTH_BUILTINS.map((b): Definition => {
      const p = providers[b.key] ?? {};
      return {
        key: b.key,
        name: b.name,
        description: `${b.name} through OAuth 2.0`,
        authKind: 'oauth2',
        credType: 'oauth2',
        adapter: 'none',
        oauth: {
          authorizeUrl: p.authorizeUrl ?? b.authorizeUrl,
          tokenUrl: p.tokenUrl ?? b.tokenUrl,
          checkUrl: p.checkUrl ?? b.checkUrl,
          clientId: p.clientId ?? null,
          clientSecret: p.clientSecret ?? null,
          scopes: b.scopes,
          pkce: b.pkce,
        },
        configSchema: EMPTY_CONFIG_SCHEMA,
        isSystem: true,
        workspaceId: null,
      };
    }),
  ];
}
