import type { Server } from '@hapi/hapi';
import type { Config } from './config.js';
import type { MetricsListener } from './http/metrics.js';
import type { Scheduler } from './jobs/scheduler.js';
import type { Kernel, KernelOverrides } from './kernel.js';
import type { Services } from './services.js';

/**
 * What the composition root (src/app.ts) makes, as its users see it: the CLI gets the two
 * factories from the entry point (src/main.ts) and never imports the root itself.
 */
export interface AppContext {
  kernel: Kernel;
  services: Services;
  draining: boolean;
}

export interface RunningApp {
  app: AppContext;
  servers: Server[];
  /** The Prometheus listener, when GANTRY_METRICS_PORT is set. */
  metrics: MetricsListener | null;
  scheduler: Scheduler;
  stop(): Promise<void>;
}

/** src/app.ts's factories, handed to the CLI: open the app on a data directory, start serving it. */
export interface AppFactories {
  open(config: Config, overrides?: KernelOverrides): Promise<AppContext>;
  start(app: AppContext, options?: { beforeListen?: () => Promise<unknown> }): Promise<RunningApp>;
}
