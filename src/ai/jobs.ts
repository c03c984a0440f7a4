import type { AppContext } from '../app.js';
import type { JobSpec } from '../jobs/scheduler.js';

/** The provider health probe (GANTRY_AI_HEALTH_CRON, every 30 s by default). */
export function aiJobs(app: AppContext): JobSpec[] {
  return [{ name: 'ai.provider-health', pattern: app.kernel.config.ai.healthCron, run: (now) => app.services.ai.probeProviders(now) }];
}
