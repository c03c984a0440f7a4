import type { Kernel } from '../kernel.js';
import type { AiService } from './service.js';
import type { JobSpec } from '../jobs/scheduler.js';

/** The provider health probe (GANTRY_AI_HEALTH_CRON, every 30 s by default). */
export function aiJobs(ai: Pick<AiService, 'probeProviders'>, kernel: Pick<Kernel, 'config'>): JobSpec[] {
  return [
    {
      name: 'ai.provider-health',
      pattern: kernel.config.ai.healthCron,
      scope: 'node',
      run: (now) => ai.probeProviders(now),
    },
  ];
}
