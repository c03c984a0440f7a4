import { oauthErrorBody, oauthResponses as R } from './responses.js';
import Joi from 'joi';
import type { Request, ResponseToolkit, Server, ServerRoute } from '@hapi/hapi';
import { type DirectAnswer, serveDirectForm } from '../http/direct-forms.js';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { bearerToken, principalOf } from '../http/auth.js';
import { clientAddressOf } from '../http/client-address.js';
import type { RateDecision } from '../http/rate-limit.js';
import type { EndpointCaller } from './endpoint-limits.js';
import { OAuthError, invalidRequest, oauthErrorFormat } from './errors.js';
import { oauthPageRoutes } from './page-routes.js';
import { discoveryDocument } from './discovery.js';
import { registrationRoutes } from './registration-route.js';
import { protectedResourceRoutes, publicDocumentRoutes } from './protected-resource-routes.js';

const FORM = 'application/x-www-form-urlencoded';

/** Token and revoke responses are never cached (RFC 6749 5.1), errors included. */
function oauthJson(h: ResponseToolkit, body: unknown, status = 200, headers: Record<string, string> = {}) {
  const res = h
    .response(body as object)
    .code(status)
    .header('Cache-Control', 'no-store')
    .header('Pragma', 'no-cache');
  for (const [name, value] of Object.entries(headers)) res.header(name, value);
  return res;
}

function oauthFailure(h: ResponseToolkit, err: unknown) {
  if (err instanceof OAuthError) return oauthJson(h, err.body(), err.status, err.headers);
  throw err;
}

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/**
 * The token endpoint's answer (RFC 6749 5.1 and 5.2), the same through hapi's route and the
 * kernel's direct form (docs/oauth.md, Performance): tokens, or the OAuth error with its headers.
 * Anything else is thrown, for the kernel's one mapping.
 */
async function tokenAnswer(
  oauth: PluginDeps['services']['oauth'],
  caller: EndpointCaller,
  credentials: () => { authorization: string | undefined; body: Record<string, unknown> },
): Promise<DirectAnswer> {
  try {
    return { status: 200, body: await oauth.token(credentials(), caller), headers: NO_STORE };
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    return { status: err.status, body: err.body(), headers: { ...NO_STORE, ...err.headers } };
  }
}

/**
 * Refreshes are the hottest request clients send (one per access token's hour, per user): a
 * plain form POST of the token endpoint is answered in front of hapi (docs/kernel.md, Direct
 * forms) by the same tokenAnswer as the route, the call standing for the caller (its address,
 * and the limit's decision for the headers).
 */
export function serveTokenDirectly(server: Server, app: PluginDeps): void {
  const { oauth } = app.services;
  serveDirectForm(server, '/oauth/token', 'oauth.token', (call) =>
    tokenAnswer(oauth, call, () => ({ authorization: call.headers.authorization, body: call.form })),
  );
}

function credentials(request: Request) {
  if (request.mime !== FORM) throw invalidRequest('The body must be application/x-www-form-urlencoded');
  return {
    authorization: request.headers.authorization as string | undefined,
    body: (request.payload ?? {}) as Record<string, unknown>,
  };
}

/**
 * The token and revoke endpoints count their callers themselves (endpoint-limits.ts), once the
 * client and user are known; the decision they reach goes to the kernel's X-RateLimit headers.
 */
async function counted<T>(request: Request, run: (caller: EndpointCaller) => Promise<T>): Promise<T> {
  const caller: EndpointCaller = { address: clientAddressOf(request) };
  try {
    return await run(caller);
  } finally {
    if (caller.rateLimit) (request.app as { rateLimit?: RateDecision }).rateLimit = caller.rateLimit;
  }
}

/** The OAuth pages, the discovery documents and the MCP resource's metadata: at the root, not under the API prefix. */
export function oauthRootRoutes(app: PluginDeps): ServerRoute[] {
  const discovery = discoveryDocument(app.kernel.config);
  return [
    ...oauthPageRoutes(app),
    ...publicDocumentRoutes('/.well-known/openid-configuration', 'oauth.discovery-openid', discovery, R.discovery),
    ...publicDocumentRoutes('/.well-known/oauth-authorization-server', 'oauth.discovery', discovery, R.discovery),
    ...protectedResourceRoutes(app),
  ];
}

/** RFC 6749 2.3.1 and 4.1.3: the token and revoke requests are forms. */
const FORM_BODY = { type: 'application/x-www-form-urlencoded' };

/** The token, revoke, userinfo and grants endpoints (under the API prefix). */

export function oauthRoutes(app: PluginDeps): ServerRoute[] {
  const { oauth } = app.services;
  const protocol = {
    auth: false as const,
    plugins: { gantry: { errorFormat: oauthErrorFormat, errorSchema: oauthErrorBody } },
  };
  // Not counted per address by the kernel: a partner backend refreshes for many users from one.
  const counting = {
    auth: false as const,
    plugins: { gantry: { errorFormat: oauthErrorFormat, errorSchema: oauthErrorBody, rateLimit: false as const } },
  };

  return [
    ...registrationRoutes(app),
    {
      method: 'POST',
      path: '/oauth/token',
      options: {
        id: 'oauth.token',
        ...counting,
        plugins: { gantry: { ...counting.plugins.gantry, responses: R.token, requestBody: FORM_BODY } },
        payload: { maxBytes: 16 * 1024 },
      },
      handler: async (request, h) => {
        const answer = await counted(request, (caller) => tokenAnswer(oauth, caller, () => credentials(request)));
        return oauthJson(h, answer.body, answer.status, answer.headers);
      },
    },
    {
      method: 'POST',
      path: '/oauth/revoke',
      options: {
        id: 'oauth.revoke',
        ...counting,
        plugins: { gantry: { ...counting.plugins.gantry, responses: R.revoke, requestBody: FORM_BODY } },
        payload: { maxBytes: 16 * 1024 },
      },
      handler: async (request, h) => {
        try {
          await counted(request, (caller) => oauth.revoke(credentials(request), caller));
          return oauthJson(h, {});
        } catch (err) {
          return oauthFailure(h, err);
        }
      },
    },
    {
      method: 'GET',
      path: '/oauth/userinfo',
      // Verified here rather than by the kernel: every OAuth access token may call it whatever
      // its scopes (the claims follow the scopes), and first-party session tokens may not
      // (they are not OAuth tokens; /auth/me serves the first-party app). RFC 6750 3 errors.
      options: {
        id: 'oauth.userinfo',
        ...protocol,
        plugins: { gantry: { ...protocol.plugins.gantry, responses: R.userinfo } },
      },
      handler: async (request, h) => {
        const token = bearerToken(request.headers.authorization as string | undefined);
        if (!token)
          return oauthJson(
            h,
            { error: 'invalid_request', error_description: 'A bearer access token is required' },
            401,
            { 'WWW-Authenticate': 'Bearer realm="gantry"' },
          );
        const claims = await oauth.tokens.verifyAccessToken(token);
        if (!claims) {
          return oauthJson(
            h,
            { error: 'invalid_token', error_description: 'The access token is invalid, expired or revoked' },
            401,
            {
              'WWW-Authenticate': 'Bearer realm="gantry", error="invalid_token"',
            },
          );
        }
        return oauthJson(h, await oauth.userInfo(claims.sub, claims.scopes));
      },
    },
    {
      method: 'GET',
      path: '/oauth/grants',
      // No scope declared: only first-party session tokens reach it.
      options: { id: 'oauth.grants', plugins: { gantry: { responses: R.grants } } },
      handler: async (request, h) => reply(request, h, await oauth.listGrants(principalOf(request).userId)),
    },
    {
      method: 'DELETE',
      path: '/oauth/grants/{clientId}',
      options: {
        id: 'oauth.grants-revoke',
        plugins: { gantry: { responses: R.grantRevoked, errors: ['NOT_FOUND'] } },
        // A UUID, or a metadata document's URL (URL-encoded in the path).
        validate: {
          params: Joi.object({
            clientId: Joi.alternatives(
              Joi.string().guid(),
              Joi.string()
                .uri({ scheme: ['https', 'http'] })
                .max(1024),
            ).required(),
          }),
        },
      },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await oauth.revokeClientGrant(principalOf(request).userId, (request.params as { clientId: string }).clientId),
        ),
    },
  ];
}
