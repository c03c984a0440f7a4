import type { Plugin, Server } from '@hapi/hapi';
import type { Kernel } from '../kernel.js';
import { cachedCaller, registerBearerAuth, type BearerVerifier } from './auth.js';
import { registerClientAddress } from './client-address.js';
import { registerHealth } from './health.js';
import { countKnownCaller, DEFAULT_RATE_LIMIT, rateLimitCheck } from './rate-limit.js';
import { registerOpenApi } from './openapi/route.js';
import { registerRequestMetrics } from './metrics.js';
import { installPostAuthSteps } from './post-auth.js';
import { registerPages } from './pages.js';
import { preparedAnswerRecorder, registerResponses, validationFailAction } from './responses.js';
import { installPreparedAnswers } from './prepared.js';
import { installDirectForms } from './direct-forms.js';
import { API, apiUrl } from './paths.js';
import { registerRequestTracing, tracePreparedAnswers } from './tracing.js';
/** What the server stands on: the kernel, and whether the app is shutting down. */
export interface ServerDeps {
  kernel: Kernel;
  draining: boolean;
}

/**
 * What the composition root hands the server (src/app.ts): the domains' plugins, with the deps
 * they are registered with, the bearer token verifiers, and what the OpenAPI document says of
 * the OAuth scopes and of other auth strategies. The kernel names no domain.
 */
export interface ServerParts<D> {
  deps: D;
  /** Registered under the API prefix. */
  api: Plugin<D>[];
  /** Registered at the root: pages and discovery documents. */
  pages: Plugin<D>[];
  verifiers: readonly BearerVerifier[];
  oauthScopes: Record<string, string>;
  strategies: Record<string, { type: string; scheme: string; description: string }>;
  /** The page a person is led back to from an error page (the home page, or the status page on its own listener). */
  homePath: string;
}

export interface ServerOptions {
  port?: number;
  host?: string;
  /** The second listener (GANTRY_STATUS_PORT): its parts hold only the status service and its page. */
  statusOnly?: boolean;
}

/**
 * Builds a configured hapi server: kernel conventions first, then each domain's plugin (the
 * API ones under the API prefix, pages and discovery documents at the root).
 * It never listens by itself: `serve` starts it, tests initialize() and inject().
 */
export async function createServer<D>(
  app: ServerDeps,
  parts: ServerParts<D>,
  options: ServerOptions = {},
): Promise<Server> {
  const { kernel } = app;
  // hapi is loaded here, not when the bundle is: a CLI command that serves nothing never
  // evaluates it (a fifth of a command's start-up).
  const { default: Hapi } = await import('@hapi/hapi');
  const server = Hapi.server({
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    router: { stripTrailingSlash: true },
    // The peer address is read when the request arrives: a socket that closes before the
    // response (a stream ended by the client) has none left to read for the log line.
    info: { remote: true },
    routes: {
      validate: { failAction: validationFailAction, options: { abortEarly: false } },
      payload: { maxBytes: 1024 * 1024, failAction: 'error' },
      // No range requests on an API (no Accept-Ranges header); the legacy X-XSS-Protection and
      // X-Download-Options headers are left out: every byte of headers is paid on every response.
      response: { emptyStatusCode: 204, ranges: false },
      security: { noSniff: true, referrer: 'no-referrer', hsts: false, xframe: 'deny', xss: false, noOpen: false },
    },
    debug: false,
  });
  // First: the request's span covers every step after it (docs/operations.md, Traces).
  registerRequestTracing(server, kernel.tracing);
  // Every route declared from here on gets the kernel's step after authentication.
  const rateLimit = rateLimitCheck(kernel.limiter, kernel.clock, kernel.metrics);
  const postAuth = installPostAuthSteps(server, rateLimit);
  registerClientAddress(server, kernel.config.trustedProxies);
  const answerError = registerResponses(
    server,
    kernel.logger,
    kernel.clock,
    kernel.pages,
    kernel.reportMissingKey,
    parts.homePath,
  );
  registerPages(server, kernel.pages);
  const { verifiers } = parts;
  registerBearerAuth(server, verifiers, postAuth.countInScheme);
  const countRequest = registerRequestMetrics(server, kernel.metrics);
  registerHealth(
    server,
    kernel.db,
    () => kernel.changes.listenState,
    () => app.draining,
  );

  await server.register(
    parts.api.map((plugin) => ({ plugin: postAuth.plugin(plugin), options: parts.deps })),
    { routes: { prefix: API } },
  );
  await server.register(parts.pages.map((plugin) => ({ plugin: postAuth.plugin(plugin), options: parts.deps })));
  // Last: the document covers every route above (docs/openapi.md). The status-only listener
  // serves nothing but the status service, so it keeps the document without serving it.
  const { publicUrl } = kernel.config;
  registerOpenApi(
    server,
    {
      title: 'Gantry',
      version: '0.1.0',
      serverUrl: publicUrl,
      oauth: {
        authorizationUrl: apiUrl(publicUrl, '/oauth/authorize'),
        tokenUrl: apiUrl(publicUrl, '/oauth/token'),
        refreshUrl: apiUrl(publicUrl, '/oauth/token'),
        scopes: parts.oauthScopes,
      },
      strategies: parts.strategies,
      effectiveLimit: (rule) => kernel.limiter.effectiveLimit(rule),
      defaultRateLimit: DEFAULT_RATE_LIMIT,
      pages: kernel.pages,
    },
    !options.statusOnly,
  );
  postAuth.assertCovered(server);
  // Answers written in front of hapi (prepared GETs, direct form POSTs) are logged, counted and
  // traced as hapi's are (docs/kernel.md).
  const record = tracePreparedAnswers(
    preparedAnswerRecorder(kernel.logger, countRequest, kernel.config.trustedProxies),
    kernel.tracing,
    server.info.protocol,
  );
  installPreparedAnswers(server, record, {
    identify: (authorization, config) => cachedCaller(verifiers, authorization, config),
    count: (routeId, config, principal) => countKnownCaller(kernel.limiter, routeId, config.rateLimit, principal),
  });
  installDirectForms(server, record, { proxies: kernel.config.trustedProxies, answerError });
  return server;
}
