import type { Request, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../http/plugin.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { tenancyHeaders } from '../accounts/access.js';
import { schemas } from './schemas.js';
import type { McpClientChoice } from './mcp-auth.js';
import { settingsPage } from './page.js';
import { htmlErrorFormat } from '../http/pages.js';

/** Connector instances, tools, credentials, OAuth linking and tool approvals (docs/connectors.md). */
export function connectorRoutes(app: PluginDeps): ServerRoute[] {
  const { connectors, accounts } = app.services;
  const C = '/connectors';
  const ws = (request: Request) =>
    accounts.access.workspace(
      principalOf(request),
      tenancyHeaders(request.headers as Record<string, string | undefined>),
    );
  const actor = async (request: Request) => ({ principal: principalOf(request), ws: await ws(request) });
  const params = (request: Request) => request.params as Record<string, string>;
  const body = <T>(request: Request) => request.payload as T;

  return [
    {
      method: 'GET',
      path: `${C}/definitions`,
      options: { id: 'connectors.definitions.list' },
      handler: async (request, h) => reply(request, h, await connectors.listDefinitions(await ws(request))),
    },
    {
      method: 'POST',
      path: `${C}/definitions`,
      options: { id: 'connectors.definitions.create', validate: { payload: schemas.createDefinition } },
      handler: async (request, h) =>
        reply(request, h, await connectors.createDefinition(await actor(request), body(request)), { status: 201 }),
    },
    {
      method: 'GET',
      path: `${C}/instances`,
      options: { id: 'connectors.instances.list', validate: { query: schemas.listQuery } },
      handler: async (request, h) => {
        const { limit, offset } = request.query as { limit: number; offset: number };
        const page = await connectors.list(await ws(request), limit, offset);
        return reply(request, h, page.data, { meta: { ...page.meta } });
      },
    },
    {
      method: 'POST',
      path: `${C}/instances`,
      options: { id: 'connectors.instances.create', validate: { payload: schemas.createInstance } },
      handler: async (request, h) =>
        reply(request, h, await connectors.create(await actor(request), body(request)), { status: 201 }),
    },
    {
      method: 'GET',
      path: `${C}/instances/{id}`,
      options: { id: 'connectors.instances.get', validate: { params: schemas.instanceParams } },
      handler: async (request, h) => reply(request, h, await connectors.get(await ws(request), params(request).id)),
    },
    {
      method: 'PATCH',
      path: `${C}/instances/{id}`,
      options: {
        id: 'connectors.instances.update',
        validate: { params: schemas.instanceParams, payload: schemas.updateInstance },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.update(await actor(request), params(request).id, body(request))),
    },
    {
      method: 'DELETE',
      path: `${C}/instances/{id}`,
      options: { id: 'connectors.instances.delete', validate: { params: schemas.instanceParams } },
      handler: async (request, h) =>
        reply(request, h, await connectors.remove(await actor(request), params(request).id)),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/test`,
      options: { id: 'connectors.instances.test', validate: { params: schemas.instanceParams } },
      handler: async (request, h) => reply(request, h, await connectors.test(await actor(request), params(request).id)),
    },
    {
      method: 'GET',
      path: `${C}/instances/{id}/tools`,
      options: { id: 'connectors.tools.list', validate: { params: schemas.instanceParams, query: schemas.toolsQuery } },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await connectors.tools.list(
            await ws(request),
            params(request).id,
            (request.query as { locale?: string }).locale,
          ),
        ),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/sync-tools`,
      options: { id: 'connectors.tools.sync', validate: { params: schemas.instanceParams } },
      handler: async (request, h) =>
        reply(request, h, await connectors.tools.sync(await actor(request), params(request).id)),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/tools`,
      options: {
        id: 'connectors.tools.create',
        validate: { params: schemas.instanceParams, payload: schemas.createTool },
      },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await connectors.tools.createManual(await actor(request), params(request).id, body(request)),
          { status: 201 },
        ),
    },
    {
      method: 'PATCH',
      path: `${C}/instances/{id}/tools/{toolId}`,
      options: { id: 'connectors.tools.toggle', validate: { params: schemas.toolParams, payload: schemas.toggleTool } },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await connectors.tools.update(
            await actor(request),
            params(request).id,
            params(request).toolId,
            body(request),
          ),
        ),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/tools/{toolId}/invoke`,
      options: { id: 'connectors.tools.invoke', validate: { params: schemas.toolParams, payload: schemas.invokeTool } },
      handler: async (request, h) => {
        const out = await connectors.tools.invoke(
          await actor(request),
          params(request).id,
          params(request).toolId,
          body<{ input: Record<string, unknown> }>(request).input,
        );
        return reply(request, h, out.body, { status: out.status });
      },
    },
    {
      method: 'GET',
      path: `${C}/approvals`,
      options: { id: 'connectors.approvals.list', validate: { query: schemas.approvalsQuery } },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await connectors.tools.listApprovals(await actor(request), (request.query as { status?: string }).status),
        ),
    },
    ...(['approve', 'reject'] as const).map(
      (decision): ServerRoute => ({
        method: 'POST',
        path: `${C}/approvals/{approvalId}/${decision}`,
        options: { id: `connectors.approvals.${decision}`, validate: { params: schemas.approvalParams } },
        handler: async (request, h) =>
          reply(request, h, await connectors.tools.decide(await actor(request), params(request).approvalId, decision)),
      }),
    ),
    {
      method: 'POST',
      path: `${C}/instances/{id}/credentials`,
      options: {
        id: 'connectors.credentials.store',
        validate: { params: schemas.instanceParams, payload: schemas.storeCredentials },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.storeCredentials(await actor(request), params(request).id, body(request))),
    },
    {
      method: 'GET',
      path: `${C}/instances/{id}/credentials/status`,
      options: { id: 'connectors.credentials.status', validate: { params: schemas.instanceParams } },
      handler: async (request, h) =>
        reply(request, h, await connectors.credentialStatus(await actor(request), params(request).id)),
    },
    {
      method: 'DELETE',
      path: `${C}/instances/{id}/credentials`,
      options: { id: 'connectors.credentials.delete', validate: { params: schemas.instanceParams } },
      handler: async (request, h) =>
        reply(request, h, await connectors.deleteCredentials(await actor(request), params(request).id)),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/oauth/initiate`,
      options: {
        id: 'connectors.oauth.initiate',
        validate: { params: schemas.instanceParams, payload: schemas.oauthInitiate },
      },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await connectors.oauth.initiate(
            await actor(request),
            params(request).id,
            (request.payload as McpClientChoice | null) ?? {},
          ),
        ),
    },
    {
      // Gantry's Client ID Metadata Document (docs/connectors.md, Authorization of remote MCP servers).
      method: 'GET',
      path: `${C}/oauth/client-metadata.json`,
      options: { id: 'connectors.oauth.client-metadata', auth: false },
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
        plugins: { gantry: { errorFormat: htmlErrorFormat, invalidParamsStatus: 400 } },
        validate: { params: schemas.callbackParams, query: schemas.callbackQuery },
      },
      handler: async (request, h) => {
        const location = await connectors.oauth.callback(
          params(request).connectorKey,
          request.query as { code?: string; state?: string; error?: string; iss?: string },
        );
        return h.response().redirect(location).code(302).header('Cache-Control', 'no-store');
      },
    },
  ];
}

/** The connector settings page (at the root, not under the API prefix). */
export function connectorPageRoutes(): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/settings/connectors',
      options: { id: 'connectors.settings.page', auth: false, plugins: { gantry: { errorFormat: htmlErrorFormat } } },
      handler: (request, h) => h.page(settingsPage(request.query as Record<string, string>)),
    },
  ];
}
