import type { ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { reply } from '../http/envelope.js';
import { responses as R, schemas } from './schemas.js';
import { connectorCredentialRoutes } from './credential-routes.js';
import { CONNECTOR_ERRORS, connectorRequests, UPSTREAM_ERRORS } from './route-helpers.js';
import { settingsPage } from './page.js';
import { htmlErrorFormat } from '../http/pages.js';

/** Connector instances, tools, credentials, OAuth linking and tool approvals (docs/connectors.md). */
export function connectorRoutes(app: PluginDeps): ServerRoute[] {
  const { connectors } = app.services;
  const C = '/connectors';
  const { ws, actor, params, body } = connectorRequests(app);

  return [
    {
      method: 'GET',
      path: `${C}/definitions`,
      options: {
        id: 'connectors.definitions.list',
        plugins: { gantry: { responses: R.definitions, errors: CONNECTOR_ERRORS } },
      },
      handler: async (request, h) => reply(request, h, await connectors.listDefinitions(await ws(request))),
    },
    {
      method: 'POST',
      path: `${C}/definitions`,
      options: {
        id: 'connectors.definitions.create',
        plugins: { gantry: { responses: R.definitionCreated, errors: CONNECTOR_ERRORS } },
        validate: { payload: schemas.createDefinition },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.createDefinition(await actor(request), body(request)), { status: 201 }),
    },
    {
      method: 'GET',
      path: `${C}/instances`,
      options: {
        id: 'connectors.instances.list',
        plugins: { gantry: { responses: R.instances, errors: CONNECTOR_ERRORS } },
        validate: { query: schemas.listQuery },
      },
      handler: async (request, h) => {
        const { limit, offset } = request.query as { limit: number; offset: number };
        const page = await connectors.list(await ws(request), limit, offset);
        return reply(request, h, page.data, { meta: { ...page.meta } });
      },
    },
    {
      method: 'POST',
      path: `${C}/instances`,
      options: {
        id: 'connectors.instances.create',
        plugins: { gantry: { responses: R.instanceCreated, errors: CONNECTOR_ERRORS } },
        validate: { payload: schemas.createInstance },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.create(await actor(request), body(request)), { status: 201 }),
    },
    {
      method: 'GET',
      path: `${C}/instances/{id}`,
      options: {
        id: 'connectors.instances.get',
        plugins: { gantry: { responses: R.instance, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.instanceParams },
      },
      handler: async (request, h) => reply(request, h, await connectors.get(await ws(request), params(request).id)),
    },
    {
      method: 'PATCH',
      path: `${C}/instances/{id}`,
      options: {
        id: 'connectors.instances.update',
        plugins: { gantry: { responses: R.instance, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.instanceParams, payload: schemas.updateInstance },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.update(await actor(request), params(request).id, body(request))),
    },
    {
      method: 'DELETE',
      path: `${C}/instances/{id}`,
      options: {
        id: 'connectors.instances.delete',
        plugins: { gantry: { responses: R.instance, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.instanceParams, query: schemas.deleteInstanceQuery },
      },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await connectors.remove(await actor(request), params(request).id, {
            releaseToolNames: (request.query as { releaseToolNames: string }).releaseToolNames === 'true',
          }),
        ),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/test`,
      options: {
        id: 'connectors.instances.test',
        plugins: { gantry: { responses: R.tested, errors: UPSTREAM_ERRORS } },
        validate: { params: schemas.instanceParams },
      },
      handler: async (request, h) => reply(request, h, await connectors.test(await actor(request), params(request).id)),
    },
    {
      method: 'GET',
      path: `${C}/instances/{id}/tools`,
      options: {
        id: 'connectors.tools.list',
        plugins: { gantry: { responses: R.tools, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.instanceParams, query: schemas.toolsQuery },
      },
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
      options: {
        id: 'connectors.tools.sync',
        plugins: { gantry: { responses: R.tools, errors: UPSTREAM_ERRORS } },
        validate: { params: schemas.instanceParams },
      },
      handler: async (request, h) =>
        reply(request, h, await connectors.tools.sync(await actor(request), params(request).id)),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/tools`,
      options: {
        id: 'connectors.tools.create',
        plugins: { gantry: { responses: R.toolCreated, errors: CONNECTOR_ERRORS } },
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
      options: {
        id: 'connectors.tools.toggle',
        plugins: { gantry: { responses: R.toolSettings, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.toolParams, payload: schemas.toggleTool },
      },
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
      path: `${C}/instances/{id}/tools/{toolId}/accept-definition`,
      options: {
        id: 'connectors.tools.accept-definition',
        plugins: { gantry: { responses: R.tool, errors: CONNECTOR_ERRORS } },
        validate: { params: schemas.toolParams, payload: schemas.acceptDefinition },
      },
      handler: async (request, h) =>
        reply(
          request,
          h,
          await connectors.tools.acceptDefinition(
            await actor(request),
            params(request).id,
            params(request).toolId,
            (request.payload as { detectedAt?: string } | null) ?? {},
          ),
        ),
    },
    {
      method: 'POST',
      path: `${C}/instances/{id}/tools/{toolId}/invoke`,
      options: {
        id: 'connectors.tools.invoke',
        plugins: { gantry: { responses: R.invoked, errors: UPSTREAM_ERRORS } },
        validate: { params: schemas.toolParams, payload: schemas.invokeTool },
      },
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
      options: {
        id: 'connectors.approvals.list',
        plugins: { gantry: { responses: R.approvals, errors: CONNECTOR_ERRORS } },
        validate: { query: schemas.approvalsQuery },
      },
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
        options: {
          id: `connectors.approvals.${decision}`,
          plugins: {
            gantry: {
              responses: R.approval,
              errors: [...(CONNECTOR_ERRORS ?? []), 'STEP_UP_REQUIRED', 'SECOND_FACTOR_REQUIRED'],
            },
          },
          validate: { params: schemas.approvalParams },
        },
        handler: async (request, h) =>
          reply(request, h, await connectors.tools.decide(await actor(request), params(request).approvalId, decision)),
      }),
    ),
    ...connectorCredentialRoutes(app),
  ];
}

/** The connector settings page (at the root, not under the API prefix). */
export function connectorPageRoutes(brand: string): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/settings/connectors',
      options: {
        id: 'connectors.settings.page',
        auth: false,
        plugins: { gantry: { responses: R.settingsPage, errorFormat: htmlErrorFormat } },
      },
      handler: (request, h) => h.page(settingsPage(request.query as Record<string, string>, brand)),
    },
  ];
}
