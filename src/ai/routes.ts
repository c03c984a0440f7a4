import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { PluginDeps } from '../services.js';
import { reply, requestIdOf } from '../http/envelope.js';
import { countOpenStream, SSE_HEADERS, SseStream, sseFrame } from '../http/sse.js';
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
  /**
   * A streamed run (docs/ai.md, Streamed runs): errors before the first text answer in the
   * envelope like any run; after it, Server-Sent Events. The client leaving aborts the provider
   * call; a response written to its end has nothing left to abort.
   */
  async function streamRun(request: Request, h: ResponseToolkit, input: RunInput) {
    const abort = new AbortController();
    const { res } = request.raw;
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const relay = await ai.startStream(principalOf(request), accountHeader(request), input, abort.signal);
    const stream = new SseStream();
    relay((e) => stream.send(sseFrame(e.event, e.data))).then(
      () => stream.end(),
      (err: unknown) => {
        app.kernel.logger.error('streamed run failed to settle', { err, requestId: requestIdOf(request) });
        stream.end();
      },
    );
    countOpenStream(app.kernel.metrics, 'chat', res);
    const response = h.response(stream).type('text/event-stream; charset=utf-8');
    for (const [name, value] of Object.entries(SSE_HEADERS)) response.header(name, value);
    return response;
  }

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
        const input = request.payload as RunInput;
        if (input.stream) return streamRun(request, h, input);
        const run = await ai.startRun(principalOf(request), accountHeader(request), input);
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
