import { oauthResponses } from './responses.js';
import type { GantryRouteConfig } from '../http/route-config.js';
import type { ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { API } from '../http/paths.js';
import { PROTECTED_RESOURCE_PATH } from './mcp-auth.js';
import { MCP_PATH } from './resources.js';

/**
 * A public metadata document (RFC 8414, RFC 9728): cacheable and readable from any origin.
 * Browser-based MCP clients fetch these with an `MCP-Protocol-Version` header, which makes the
 * browser ask first; the preflight allows it (docs/oauth.md, Discovery and MCP resource).
 */
export function publicDocumentRoutes(
  path: string,
  id: string,
  document: object,
  answers: GantryRouteConfig['responses'],
): ServerRoute[] {
  const cors = (h: ResponseToolkit, body: object | null, status: number) =>
    h
      .response(body ?? undefined)
      .code(status)
      .header('Access-Control-Allow-Origin', '*');
  return [
    {
      method: 'GET',
      path,
      options: { id, auth: false, plugins: { gantry: { responses: answers } } },
      handler: (_request, h) => cors(h, document, 200).header('Cache-Control', 'public, max-age=3600'),
    },
    {
      method: 'OPTIONS',
      path,
      options: { id: `${id}-preflight`, auth: false, plugins: { gantry: { responses: oauthResponses.preflight } } },
      handler: (_request, h) =>
        cors(h, null, 204)
          .header('Access-Control-Allow-Methods', 'GET, OPTIONS')
          .header('Access-Control-Allow-Headers', 'MCP-Protocol-Version')
          .header('Access-Control-Max-Age', '86400'),
    },
  ];
}

/**
 * The MCP resource's RFC 9728 metadata, at the path-inserted well-known URI and at the root one
 * (MCP clients try both, in that order; docs/oauth.md, MCP resource).
 */
export function protectedResourceRoutes(app: PluginDeps): ServerRoute[] {
  const { metadata } = app.services.oauth.mcp;
  return [
    ...publicDocumentRoutes(
      `${PROTECTED_RESOURCE_PATH}${API}${MCP_PATH}`,
      'oauth.protected-resource',
      metadata,
      oauthResponses.protectedResource,
    ),
    ...publicDocumentRoutes(
      PROTECTED_RESOURCE_PATH,
      'oauth.protected-resource-root',
      metadata,
      oauthResponses.protectedResource,
    ),
  ];
}
