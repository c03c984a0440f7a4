import type { Request, ResponseToolkit } from '@hapi/hapi';
import { DomainError } from '../http/errors.js';
import type { DomainPlugin } from '../services.js';
import { McpAuthError } from '../oauth/mcp-auth.js';
import { mcpRoutes } from './routes.js';

const CODE_BY_STATUS = { 400: 'VALIDATION_FAILED', 401: 'UNAUTHORIZED', 403: 'INSUFFICIENT_SCOPE' } as const;

/**
 * The MCP endpoint (docs/mcp.md). Its own auth strategy: only access tokens issued for the MCP
 * resource, with their workspace re-checked; the principal it sets is what the kernel's rate
 * limit counts and the request log names.
 */
export const mcpPlugin: DomainPlugin = {
  name: 'mcp',
  register(server, deps) {
    const { mcp } = deps.services;
    server.auth.scheme('gantry-mcp', () => ({
      async authenticate(request: Request, h: ResponseToolkit) {
        try {
          const caller = await mcp.authenticate(request.headers.authorization as string | undefined);
          return h.authenticated({
            credentials: caller.principal as unknown as Record<string, unknown>,
            artifacts: { caller },
          });
        } catch (err) {
          if (!(err instanceof McpAuthError)) throw err;
          throw new DomainError(
            CODE_BY_STATUS[err.status],
            err.description,
            { oauthError: err.error },
            {
              'WWW-Authenticate': err.wwwAuthenticate,
            },
          );
        }
      },
    }));
    server.auth.strategy('mcp', 'gantry-mcp');
    server.route(mcpRoutes(deps));
    server.ext('onPreStop', () => mcp.close());
  },
};
