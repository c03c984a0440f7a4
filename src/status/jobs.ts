import type { StatusService } from './service.js';
import type { JobSpec } from '../jobs/scheduler.js';

/**
 * The status service's timed work. Each takes `now` from the scheduler (the injected clock),
 * so tests call the bodies directly.
 */
export function statusJobs(status: StatusService): JobSpec[] {
  return [
    // Maintenance windows start and end by themselves, within ten seconds of their times.
    {
      name: 'status.maintenance-transitions',
      pattern: '*/10 * * * * *',
      scope: 'cluster',
      run: (now) => status.advanceMaintenance(now),
    },
    // Rolling uptime windows move without writes: rebuild as the minute turns, before any request asks.
    {
      name: 'status.projection-refresh',
      pattern: '0 * * * * *',
      scope: 'node',
      run: () => status.projection.refresh(),
    },
    // Subscribers: events into mails and webhook deliveries (a status change also starts this at
    // once in the server that sees it; the tick catches what a stopped process left).
    {
      name: 'status.subscriber-fanout',
      pattern: '*/10 * * * * *',
      scope: 'cluster',
      run: () => status.fanOut(),
    },
    // Webhook deliveries due now: first attempts and retries (docs/status.md, Webhooks).
    {
      name: 'status.webhook-delivery',
      pattern: '*/15 * * * * *',
      scope: 'cluster',
      run: (now) => status.deliverWebhooks(now),
    },
    // Unconfirmed addresses are deleted once their link expires; events go after 30 days.
    {
      name: 'status.subscriptions-housekeeping',
      pattern: '0 23 * * * *',
      scope: 'cluster',
      run: (now) => status.expireSubscriptions(now),
    },
    // The daily snapshot of the day that just ended, and the uptime summaries.
    {
      name: 'status.daily-snapshot',
      pattern: '0 0 0 * * *',
      scope: 'cluster',
      run: (now) => status.writeDailySnapshot(now),
    },
  ];
}
