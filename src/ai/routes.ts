import type { Request, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../http/plugin.js';
import { reply } from '../http/envelope.js';
import { principalOf } from '../http/auth.js';
import { tenancyHeaders } from '../accounts/access.js';
import type { GantryRouteConfig } from '../http/route-config.js';
import { responses, runParams, runPayload, sessionParams } from './schemas.js';
import type { RunInput } from './service.js';

/** The X-Account-Id header (docs/interface.md, Current account and workspace). */
const accountHeader = (request: Request) =>
  tenancyHeaders(request.headers as Record<string, string | undefined>).accountId;

/** Third-party apps reach chat runs with execution:run; first-party sessions always pass. */
export const RUN_ROUTE_CONFIG: GantryRouteConfig = { scope: 'execution:run' };
/**
 * docs/interface.md, Limits: each AI operations endpoint, 60 per minute. An account without the
 * AI entitlement is refused (docs/ai.md), as is one the caller is not a member of.
 */
const operationConfig = (answers: GantryRouteConfig['responses'], byId: boolean): GantryRouteConfig => ({
  rateLimit: { limit: 60, windowSec: 60 },
  responses: answers,
  errors: byId ? ['AI_NOT_ENTITLED', 'FORBIDDEN', 'NOT_FOUND'] : ['AI_NOT_ENTITLED', 'FORBIDDEN'],
});
// A run: the account (entitlement, membership), the wallet, the providers (docs/ai.md).
const RUN_ERRORS: GantryRouteConfig['errors'] = [
  'AI_NOT_ENTITLED',
  'FORBIDDEN',
  'NOT_FOUND',
  'INSUFFICIENT_FUNDS',
  'ACCOUNT_SUSPENDED',
  'NO_PROVIDER_CONFIGURED',
  'UPSTREAM_FAILED',
  ['UPSTREAM_FAILED', 503],
];

export function aiRoutes(app: PluginDeps): ServerRoute[] {
  const { ai } = app.services;
  const operation = (
    id: string,
    path: string,
    answers: GantryRouteConfig['responses'],
    answer: (request: Request) => Promise<unknown>,
    params?: object,
  ): ServerRoute => ({
    method: 'GET',
    path: `/ai/operations/${path}`,
    options: {
      id: `ai.operations.${id}`,
      plugins: { gantry: operationConfig(answers, params !== undefined) },
      ...(params ? { validate: { params } } : {}),
    },
    handler: async (request, h) => reply(request, h, await answer(request)),
  });
  return [
    {
      method: 'POST',
      path: '/features/chat/runs',
      options: {
        id: 'ai.runs.create',
        plugins: { gantry: { ...RUN_ROUTE_CONFIG, responses: responses.runCreated, errors: RUN_ERRORS } },
        payload: { maxBytes: 512 * 1024 },
        validate: { payload: runPayload },
      },
      handler: async (request, h) => {
        const run = await ai.startRun(principalOf(request), accountHeader(request), request.payload as RunInput);
        return reply(request, h, run, { status: 201 });
      },
    },
    {
      method: 'GET',
      path: '/features/chat/runs/{id}',
      options: {
        id: 'ai.runs.get',
        plugins: { gantry: { ...RUN_ROUTE_CONFIG, responses: responses.run, errors: ['NOT_FOUND'] } },
        validate: { params: runParams },
      },
      handler: async (request, h) =>
        reply(request, h, await ai.getRun(principalOf(request).userId, request.params.id as string)),
    },
    operation('rate-limit', 'rate-limit', responses.rateLimit, async (request) =>
      ai.rateLimit(await ai.entitled(principalOf(request), accountHeader(request))),
    ),
    operation('models-health', 'models/health', responses.modelsHealth, async (request) => {
      await ai.entitled(principalOf(request), accountHeader(request));
      return ai.modelsHealth();
    }),
    operation(
      'session-usage',
      'sessions/{sessionId}/usage',
      responses.sessionUsage,
      async (request) => {
        const principal = principalOf(request);
        return ai.sessionUsage(
          await ai.entitled(principal, accountHeader(request)),
          principal.userId,
          request.params.sessionId as string,
        );
      },
      sessionParams,
    ),
    operation('cache-stats', 'cache/stats', responses.cacheStats, async (request) => {
      const principal = principalOf(request);
      return ai.cacheStats(await ai.entitled(principal, accountHeader(request)), principal.userId);
    }),
  ];
}
