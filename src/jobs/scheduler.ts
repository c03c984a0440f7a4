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
  /**
   * `cluster`: one node of all those on the database runs each tick (work on shared rows);
   * `node`: every node runs it (its own memory: projections, probes feeding its own breaker).
   * docs/scaling.md, Periodic jobs.
   */
  scope: 'cluster' | 'node';
  run(now: Date): Promise<unknown>;
}

/** Claims one tick of a cluster job for this process; false when another process has it. */
export type TickClaim = (job: string, tick: Date) => Promise<boolean>;

/** croner jobs bound to the server's lifecycle: started with it, stopped with it. */
export class Scheduler {
  private readonly crons: Cron[] = [];
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly jobs: readonly JobSpec[],
    private readonly clock: Clock,
    private readonly logger: Logger,
    metrics: Metrics,
    /** Null: this process is alone (a test), every tick of every job runs here. */
    private readonly claim: TickClaim | null = null,
  ) {
    this.runs = metrics.counter(
      'gantry_job_runs_total',
      'Periodic job runs, by job and outcome (ok, failed, skipped)',
      ['job', 'outcome'],
    );
  }

  private readonly runs: Counter<'job' | 'outcome'>;

  start(): void {
    for (const job of this.jobs) {
      // protect: a slow run is never overlapped by the next tick of the same job.
      // Unnamed: croner's names are process-wide, and a test runs two schedulers of one job list.
      const cron = new Cron(job.pattern, { timezone: 'UTC', protect: true }, async (self: Cron) => {
        const started = Date.now();
        if (job.scope === 'cluster' && this.claim && !(await this.claimTick(self, job))) return;
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

  /**
   * The tick is the scheduled time this run belongs to, the latest one not after now (croner
   * never fires early), so nodes whose clocks differ by less than the interval name the same
   * tick. A failed claim (database down) skips the tick: the next one comes.
   */
  private async claimTick(cron: Cron, job: JobSpec): Promise<boolean> {
    const tick = cron.previousRuns(1, new Date(Date.now() + 1))[0];
    if (!tick) return false;
    try {
      const mine = await this.claim!(job.name, tick);
      if (!mine) this.runs.inc({ job: job.name, outcome: 'skipped' });
      this.logger.debug(mine ? 'job tick claimed' : 'job tick run elsewhere', {
        job: job.name,
        tick: tick.toISOString(),
      });
      return mine;
    } catch (err) {
      this.runs.inc({ job: job.name, outcome: 'failed' });
      this.logger.error('job tick claim failed', { job: job.name, err });
      return false;
    }
  }

  /** Stops scheduling and waits for runs in progress. */
  async stop(): Promise<void> {
    for (const cron of this.crons) cron.stop();
    this.crons.length = 0;
    await Promise.allSettled([...this.running]);
  }
}
