import type { RouteErrorFormat } from '../http/route-config.js';

/** A JSON-RPC error response with no id (the request's id is unknown or never read). */
export const rpcErrorBody = (code: number, message: string) => ({ jsonrpc: '2.0', id: null, error: { code, message } });

/** The JSON-RPC code of an HTTP refusal (-32000: the implementation-defined server error). */
function rpcCode(status: number, message: string): number {
  if (status === 400) return /JSON/.test(message) ? -32700 : -32600;
  if (status >= 500) return -32603;
  return -32000;
}

/**
 * The endpoint's errors before MCP takes over: authorization refusals as OAuth bodies (RFC 6750,
 * with the challenge in WWW-Authenticate), everything else (origin, rate limit, method, body
 * size and type) as a JSON-RPC error body, which MCP clients read.
 */
export const mcpErrorFormat: RouteErrorFormat = ({ status, message, details }) => {
  const oauthError = (details as { oauthError?: string | null } | undefined)?.oauthError;
  if (oauthError !== undefined) return { body: { error: oauthError ?? 'unauthorized', error_description: message } };
  return { body: rpcErrorBody(rpcCode(status, message), message) };
};
