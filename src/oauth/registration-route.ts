import { oauthErrorBody, oauthResponses } from './responses.js';
import type { ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import type { RateLimitRule, RouteErrorFormat } from '../http/route-config.js';
import { RegistrationError } from './registration.js';

/**
 * Registrations per client address (docs/oauth.md, Rate limits): enough for a few MCP clients
 * set up from one machine (some register twice per connection), not for filling the table.
 */
const REGISTRATION_LIMIT: RateLimitRule = { limit: 20, windowSec: 3600 };

/** The kernel's errors here (429, 413, 415, unreadable JSON) in RFC 7591 3.2.2 form. */
const registrationErrorFormat: RouteErrorFormat = (e) => ({
  body: {
    error: e.status >= 500 ? 'server_error' : e.status === 400 ? 'invalid_client_metadata' : 'invalid_request',
    error_description: e.message,
  },
  headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
});

const json = (h: ResponseToolkit, body: object, status: number) =>
  h.response(body).code(status).header('Cache-Control', 'no-store').header('Pragma', 'no-cache');

/** POST /oauth/register: RFC 7591 dynamic registration of public clients, unless switched off. */
export function registrationRoutes(app: PluginDeps): ServerRoute[] {
  const { registration } = app.services.oauth;
  return [
    {
      method: 'POST',
      path: '/oauth/register',
      options: {
        id: 'oauth.register',
        auth: false,
        payload: { allow: ['application/json'], maxBytes: 16 * 1024 },
        plugins: {
          gantry: {
            errorFormat: registrationErrorFormat,
            errorSchema: oauthErrorBody,
            rateLimit: REGISTRATION_LIMIT,
            responses: oauthResponses.register,
          },
        },
      },
      handler: async (request, h) => {
        if (!registration.enabled)
          return json(
            h,
            { error: 'access_denied', error_description: 'Dynamic client registration is switched off on this server' },
            403,
          );
        try {
          return json(h, await registration.register(request.payload), 201);
        } catch (err) {
          if (err instanceof RegistrationError) return json(h, err.body(), 400);
          throw err;
        }
      },
    },
  ];
}
