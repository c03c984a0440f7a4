import type { Config } from './config.js';
import { createKernel, type KernelOverrides } from './kernel.js';
import { Scheduler, type JobSpec } from './jobs/scheduler.js';
import { claimJobTick } from './db/store/job-ticks.js';
import { createServices } from './services.js';
import type { AppContext, RunningApp } from './app-types.js';

export type { AppContext, RunningApp } from './app-types.js';
import { createServer, type ServerOptions } from './http/server.js';
import { apiUrl } from './http/paths.js';
import { startMetricsListener } from './http/metrics.js';
import { identityJobs } from './identity/jobs.js';
import { accountsJobs } from './accounts/jobs.js';
import { statusJobs } from './status/jobs.js';
import { notificationsJobs } from './notifications/jobs.js';
import { oauthJobs } from './oauth/jobs.js';
import { connectorsJobs } from './connectors/jobs.js';
import { aiJobs } from './ai/jobs.js';
import { idpJobs } from './idp/jobs.js';
import { identityPagesPlugin, identityPlugin } from './identity/plugin.js';
import { walletPlugin } from './wallet/plugin.js';
import { billingPlugin } from './billing/plugin.js';
import { accountsPagesPlugin, accountsPlugin } from './accounts/plugin.js';
import { statusPagesPlugin, statusPlugin } from './status/plugin.js';
import { notificationsPlugin } from './notifications/plugin.js';
import { oauthPagesPlugin, oauthPlugin } from './oauth/plugin.js';
import { connectorsPagesPlugin, connectorsPlugin } from './connectors/plugin.js';
import { aiPlugin } from './ai/plugin.js';
import { mcpPlugin } from './mcp/plugin.js';
import { idpPagesPlugin } from './idp/plugin.js';
import { SCOPES } from './oauth/scopes.js';

/** The kernel and the services: what the server, the CLI and the jobs all stand on. */
export async function createAppContext(config: Config, overrides: KernelOverrides = {}): Promise<AppContext> {
  const kernel = await createKernel(config, overrides);
  return { kernel, services: createServices(kernel), draining: false };
}

/**
 * A hapi server of the app (src/http/server.ts builds it from what is named here): every
 * domain's plugins, or for the status listener only the status service and its page; the bearer
 * verifiers of sessions, OAuth tokens and API keys; the OpenAPI document's OAuth scopes and the
 * MCP endpoint's strategy. It never listens by itself.
 */
export function createAppServer(app: AppContext, options: ServerOptions = {}) {
  const { kernel, services } = app;
  const [api, pages] = options.statusOnly
    ? [[statusPlugin], [statusPagesPlugin]]
    : [
        [
          identityPlugin,
          walletPlugin,
          billingPlugin,
          accountsPlugin,
          statusPlugin,
          notificationsPlugin,
          oauthPlugin,
          connectorsPlugin,
          aiPlugin,
          mcpPlugin,
        ],
        [
          identityPagesPlugin,
          accountsPagesPlugin,
          statusPagesPlugin,
          oauthPagesPlugin,
          connectorsPagesPlugin,
          idpPagesPlugin,
        ],
      ];
  return createServer(
    app,
    {
      deps: { kernel, services },
      api,
      pages,
      verifiers: [
        services.identity.sessionVerifier,
        services.oauth.accessTokenVerifier,
        services.accounts.apiKeyVerifier,
      ],
      oauthScopes: SCOPES,
      // The status listener serves nothing but the status page: that is its home.
      homePath: options.statusOnly ? '/status' : '/',
      strategies: {
        mcp: {
          type: 'http',
          scheme: 'bearer',
          description: `An OAuth access token whose audience (RFC 8707) is ${apiUrl(kernel.config.publicUrl, '/mcp')}, with the tools:call scope.`,
        },
      },
    },
    options,
  );
}

/** Every periodic job of every domain. */
export function collectJobs(app: AppContext): JobSpec[] {
  const { kernel, services } = app;
  return [
    { name: 'kernel.change-feed-prune', pattern: '17 * * * *', scope: 'cluster', run: () => kernel.changes.prune() },
    // Mail rows carry their own lease too (request-triggered deliveries run on any node).
    {
      name: 'kernel.mail-delivery',
      pattern: '*/30 * * * * *',
      scope: 'cluster',
      run: () => kernel.mailer.deliverPending(),
    },
    ...identityJobs(kernel),
    ...accountsJobs(services.accounts),
    ...statusJobs(services.status),
    ...notificationsJobs(services.notifications, kernel),
    ...oauthJobs(services.oauth.clients, kernel),
    ...connectorsJobs(services.connectors, kernel),
    ...aiJobs(services.ai, kernel),
    ...idpJobs(services.idp),
  ];
}

/** Starts listening (main and optional status listener), the change feed and the jobs. */
export async function startApp(
  app: AppContext,
  options: {
    /** Runs right before the servers listen (serve releases the free ports it held for them). */
    beforeListen?: () => Promise<unknown>;
  } = {},
): Promise<RunningApp> {
  const { config } = app.kernel;
  const servers = [await createAppServer(app, { port: config.port, host: config.host })];
  if (config.statusPort !== null)
    servers.push(await createAppServer(app, { port: config.statusPort, host: config.host, statusOnly: true }));
  await app.kernel.changes.start();
  const { db, clock } = app.kernel;
  const claim = (job: string, tick: Date) => claimJobTick(db, job, tick.toISOString(), clock.now().toISOString());
  const scheduler = new Scheduler(collectJobs(app), clock, app.kernel.logger, app.kernel.metrics, claim);
  await options.beforeListen?.();
  for (const server of servers) await server.start();
  const metrics =
    config.metrics && (await startMetricsListener(app.kernel.metrics, config.metrics.port, config.metrics.host));
  scheduler.start();
  let stopping: Promise<void> | null = null;
  return {
    app,
    servers,
    metrics,
    scheduler,
    stop() {
      stopping ??= (async () => {
        app.draining = true;
        // Stop accepting; in-flight requests get up to 8 s to finish (systemd waits 10).
        await Promise.all([...servers.map((s) => s.stop({ timeout: 8000 })), metrics?.stop()]);
        await scheduler.stop();
        await app.kernel.close();
      })();
      return stopping;
    },
  };
}
