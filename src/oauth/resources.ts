import { apiUrl } from '../http/paths.js';

/**
 * The protected resources a token can be for (RFC 8707; docs/oauth.md, Resource indicators):
 * the REST API, `{public}/api/v1` (the default, and every token before resource indicators),
 * and the MCP endpoint, `{public}/api/v1/mcp`. A token's `aud` names exactly one of them, and
 * each refuses the other's tokens.
 */
export type ResourceKind = 'api' | 'mcp';

/** The MCP endpoint's path; its absolute URL is the MCP resource identifier. */
export const MCP_PATH = '/mcp';

/** The resource identifier (and token audience) of a kind. */
export const resourceUrl = (publicUrl: string, kind: ResourceKind): string =>
  kind === 'mcp' ? apiUrl(publicUrl, MCP_PATH) : apiUrl(publicUrl);

/** The kind a stored value names; anything else reads as the REST API. */
export const asResourceKind = (value: unknown): ResourceKind => (value === 'mcp' ? 'mcp' : 'api');

/**
 * A `resource` parameter: an absolute URI without a fragment (RFC 8707 2) that is one of our
 * two resources, compared after URL normalisation (scheme and host case, default port).
 * Anything else is the reason for `invalid_target`.
 */
export function parseResource(publicUrl: string, raw: string): { kind: ResourceKind } | { problem: string } {
  if (raw.includes('#')) return { problem: 'resource must not contain a fragment' };
  let href: string;
  try {
    href = new URL(raw).href;
  } catch {
    return { problem: 'resource must be an absolute URI' };
  }
  for (const kind of ['api', 'mcp'] as const) if (href === new URL(resourceUrl(publicUrl, kind)).href) return { kind };
  return {
    problem: `Unknown resource; this server issues tokens for ${resourceUrl(publicUrl, 'api')} and ${resourceUrl(publicUrl, 'mcp')}`,
  };
}
