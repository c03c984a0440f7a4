import type { ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../http/plugin.js';
import { API } from '../http/paths.js';
import { PROTECTED_RESOURCE_PATH } from './mcp-auth.js';
import { MCP_PATH } from './resources.js';

/**
 * The MCP resource's RFC 9728 metadata, at the path-inserted well-known URI and at the root one
 * (MCP clients try both, in that order; docs/oauth.md, MCP resource). Public and cacheable,
 * readable from any origin: browser-based clients fetch it with an `MCP-Protocol-Version`
 * header, so the preflight allows it.
 */
export function protectedResourceRoutes(app: PluginDeps): ServerRoute[] {
  const { metadata } = app.services.oauth.mcp;
  const cors = (h: ResponseToolkit, body: object | null, status: number) =>
    h
      .response(body ?? undefined)
      .code(status)
      .header('Access-Control-Allow-Origin', '*');
  const routes = (path: string, id: string): ServerRoute[] => [
    {
      method: 'GET',
      path,
      options: { id, auth: false },
      handler: (_request, h) => cors(h, metadata, 200).header('Cache-Control', 'public, max-age=3600'),
    },
    {
      method: 'OPTIONS',
      path,
      options: { id: `${id}-preflight`, auth: false },
      handler: (_request, h) =>
        cors(h, null, 204)
          .header('Access-Control-Allow-Methods', 'GET, OPTIONS')
          .header('Access-Control-Allow-Headers', 'MCP-Protocol-Version')
          .header('Access-Control-Max-Age', '86400'),
    },
  ];
  return [
    ...routes(`${PROTECTED_RESOURCE_PATH}${API}${MCP_PATH}`, 'oauth.protected-resource'),
    ...routes(PROTECTED_RESOURCE_PATH, 'oauth.protected-resource-root'),
  ];
}
