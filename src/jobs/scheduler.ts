import { Cron } from 'croner';
import type { Counter } from 'prom-client';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../lib/metrics.js';

/** A periodic job. `run` takes `now` from the injected clock so tests call it directly. */
export interface JobSpec {
  name: string;
  /** Cron pattern with optional seconds field, evaluated in UTC. */
  pattern: string;
  run(now: Date): Promise<unknown>;
}

/** croner jobs bound to the server's lifecycle: started with it, stopped with it. */
export class Scheduler {
  private readonly crons: Cron[] = [];
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly jobs: readonly JobSpec[],
    private readonly clock: Clock,
    private readonly logger: Logger,
    metrics: Metrics,
  ) {
    this.runs = metrics.counter('gantry_job_runs_total', 'Periodic job runs, by job and outcome (ok, failed)', [
      'job',
      'outcome',
    ]);
  }

  private readonly runs: Counter<'job' | 'outcome'>;

  start(): void {
    for (const job of this.jobs) {
      // protect: a slow run is never overlapped by the next tick of the same job.
      const cron = new Cron(job.pattern, { timezone: 'UTC', protect: true, name: job.name }, async () => {
        const started = Date.now();
        const run = job.run(this.clock.now());
        this.running.add(run);
        try {
          await run;
          this.runs.inc({ job: job.name, outcome: 'ok' });
          this.logger.debug('job finished', { job: job.name, durationMs: Date.now() - started });
        } catch (err) {
          this.runs.inc({ job: job.name, outcome: 'failed' });
          this.logger.error('job failed', { job: job.name, err });
        } finally {
          this.running.delete(run);
        }
      });
      this.crons.push(cron);
    }
  }

  /** Stops scheduling and waits for runs in progress. */
  async stop(): Promise<void> {
    for (const cron of this.crons) cron.stop();
    this.crons.length = 0;
    await Promise.allSettled([...this.running]);
  }
}
