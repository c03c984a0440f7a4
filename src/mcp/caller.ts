import type { WorkspaceContext } from '../accounts/access.js';
import type { Principal } from '../http/auth.js';
import type { McpToken } from '../oauth/mcp-auth.js';

/**
 * Who calls the MCP endpoint: the verified token as a principal, acting in the workspace the
 * token is bound to (membership re-checked on every request; docs/mcp.md, Authorization).
 */
export interface McpCaller {
  principal: Principal;
  ws: WorkspaceContext;
  token: McpToken;
}

/** The caller a request handler was given: the endpoint passes it in the SDK's authInfo.extra. */
export function callerOf(ctx: { http?: { authInfo?: { extra?: Record<string, unknown> } } }): McpCaller {
  const caller = ctx.http?.authInfo?.extra?.caller as McpCaller | undefined;
  // Unreachable through the route (it authenticates first); a guard against a miswired transport.
  if (!caller) throw new Error('MCP request without an authenticated caller');
  return caller;
}
