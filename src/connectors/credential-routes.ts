import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { htmlErrorFormat } from '../http/pages.js';
import { responses as R, schemas } from './schemas.js';
import type { McpClientChoice } from './mcp-auth.js';
import { CONNECTOR_ERRORS, connectorRequests, UPSTREAM_ERRORS } from './route-helpers.js';
import { randomToken } from '../lib/crypto.js';
import { LINK_COOKIE, LINK_COOKIE_TTL_SEC, linkPagePath } from './link-page.js';
import { cookie } from '../http/page-forms.js';

/** An instance's credentials and OAuth linking (docs/connectors.md). */
export function connectorCredentialRoutes(app: PluginDeps): ServerRoute[] {
  const { connectors } = app.services;
  const pages = app.kernel.pageForms;
  const linkCookie = (token: string) => `${LINK_COOKIE}=${token}; ${pages.attrs(LINK_COOKIE_TTL_SEC)}`;
  const C = '/connectors';
  const { actor, params, body } = connectorRequests(app);
  return [
    {
      method: 'POST',
      path: `${C}/instances/{id}/credentials`,
      options: {
        id: 'connectors.credentials.store',
        plugins: { gantry: { responses: R.credentialRecord, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.instanceParams, payload: schemas.storeCredentials },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.storeCredentials(await actor(request), params(request).id, body(request))),
    },
    {
      method: 'GET',
      path: `${C}/instances/{id}/credentials/status`,
      options: {
        id: 'connectors.credentials.status',
        plugins: { gantry: { responses: R.credentialStatus, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.instanceParams },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.credentialStatus(await actor(request), params(request).id)),
    },
    {
      method: 'DELETE',
      path: `${C}/instances/{id}/credentials`,
      options: {
        id: 'connectors.credentials.delete',
        plugins: { gantry: { responses: R.credentialRecord, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.instanceParams },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.deleteCredentials(await actor(request), params(request).id)),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/oauth/initiate`,
      options: {
        id: 'connectors.oauth.initiate',
        plugins: { gantry: { responses: R.oauthInitiated, errors: UPSTREAM_ERRORS } },
        validate: { params: schemas.instanceParams, payload: schemas.oauthInitiate },
      },
      handler: async (request, h) => {
        // The browser that asks is the one that may finish the link (docs/connectors.md, OAuth
        // linking): a cookie it already has, or a new one set here.
        const browserToken = cookie(request, LINK_COOKIE) ?? randomToken(32);
        const started = await connectors.oauth.initiate(
          await actor(request),
          params(request).id,
          (request.payload as McpClientChoice | null) ?? {},
          browserToken,
        );
        return reply(request, h, started).header('Set-Cookie', linkCookie(browserToken), { append: true });
      },
    },
    {
      // Gantry's Client ID Metadata Document (docs/connectors.md, Authorization of remote MCP servers).
      method: 'GET',
      path: `${C}/oauth/client-metadata.json`,
      options: {
        id: 'connectors.oauth.client-metadata',
        plugins: { gantry: { responses: R.clientMetadata } },
        auth: false,
      },
      handler: (_request, h) =>
        h
          .response(connectors.oauth.clientMetadata())
          .type('application/json')
          .header('Cache-Control', 'public, max-age=3600'),
    },
    {
      method: 'GET',
      path: `${C}/oauth/{connectorKey}/callback`,
      options: {
        id: 'connectors.oauth.callback',
        auth: false,
        plugins: { gantry: { responses: R.callback, errorFormat: htmlErrorFormat, invalidParamsStatus: 400 } },
        validate: { params: schemas.callbackParams, query: schemas.callbackQuery },
      },
      handler: async (request, h) => {
        const outcome = await connectors.oauth.callback(
          params(request).connectorKey,
          request.query as { code?: string; state?: string; error?: string; iss?: string },
          cookie(request, LINK_COOKIE),
        );
        if ('location' in outcome)
          return h.response().redirect(outcome.location).code(302).header('Cache-Control', 'no-store');
        // Another browser finished it: the code waits for the linking member to confirm, here.
        return h
          .response()
          .redirect(linkPagePath(outcome.hold))
          .code(303)
          .header('Cache-Control', 'no-store')
          .header('Set-Cookie', linkCookie(outcome.bindToken), { append: true });
      },
    },
  ];
}
