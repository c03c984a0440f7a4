import { Cron } from 'croner';
import type { Kernel } from '../kernel.js';
import type { ConnectorsService } from './service.js';
import type { JobSpec } from '../jobs/scheduler.js';

/**
 * The OAuth refresh job (docs/interface.md, Operations: every 5 minutes; config.connectorRefreshCron). A token is
 * refreshed when it expires before the next run (plus a minute of slack).
 */
export function connectorsJobs(
  connectors: Pick<ConnectorsService, 'oauth'>,
  kernel: Pick<Kernel, 'config'>,
): JobSpec[] {
  const pattern = kernel.config.connectorRefreshCron;
  return [
    {
      name: 'connectors.oauth-refresh',
      pattern,
      scope: 'cluster',
      run: (now) => connectors.oauth.refreshDue(now, refreshHorizonMs(pattern, now)),
    },
    {
      name: 'connectors.oauth-state-prune',
      pattern: '41 * * * *',
      scope: 'cluster',
      run: (now) => connectors.oauth.pruneStates(now),
    },
  ];
}

export function refreshHorizonMs(pattern: string, now: Date): number {
  const runs = new Cron(pattern, { timezone: 'UTC', paused: true }).nextRuns(2, now);
  const interval = runs.length === 2 ? runs[1].getTime() - runs[0].getTime() : 5 * 60_000;
  return interval + 60_000;
}
