import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { Metrics } from '../../src/lib/metrics.js';

describe('gantry_job_runs_total', () => {
  it('counts each run by job and outcome', async () => {
    const metrics = new Metrics('/nonexistent/gantry.db', { processMetrics: false });
    const scheduler = new Scheduler(
      [
        { name: 'test.ok', pattern: '* * * * * *', scope: 'node', run: async () => undefined },
        {
          name: 'test.boom',
          pattern: '* * * * * *',
          scope: 'node',
          run: async () => Promise.reject(new Error('boom')),
        },
      ],
      systemClock,
      createLogger('silent'),
      metrics,
    );
    const value = async (job: string, outcome: string) => {
      const metric = await metrics.registry.getSingleMetric('gantry_job_runs_total')?.get();
      return metric?.values.find((v) => v.labels.job === job && v.labels.outcome === outcome)?.value ?? 0;
    };
    scheduler.start();
    try {
      const deadline = Date.now() + 5000;
      while (
        Date.now() < deadline &&
        ((await value('test.ok', 'ok')) === 0 || (await value('test.boom', 'failed')) === 0)
      )
        await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await scheduler.stop();
    }
    assert.ok((await value('test.ok', 'ok')) >= 1);
    assert.ok((await value('test.boom', 'failed')) >= 1);
    assert.equal(await value('test.ok', 'failed'), 0);
    assert.equal(await value('test.boom', 'ok'), 0);
  });

  it('a registry per kernel: two of them do not collide', () => {
    const a = new Metrics('/nonexistent/a.db', { processMetrics: false });
    const b = new Metrics('/nonexistent/b.db', { processMetrics: false });
    a.counter('gantry_example_total', 'example').inc();
    assert.notEqual(a.registry, b.registry);
    assert.equal(b.registry.getSingleMetric('gantry_example_total'), undefined);
    assert.equal(a.counter('gantry_example_total', 'example'), a.registry.getSingleMetric('gantry_example_total'));
  });

  it('process metrics only where something scrapes (GANTRY_METRICS_PORT set)', async () => {
    const quiet = await new Metrics('/nonexistent/q.db', { processMetrics: false }).scrape();
    const served = await new Metrics('/nonexistent/s.db', { processMetrics: true }).scrape();
    assert.doesNotMatch(quiet.body, /^process_resident_memory_bytes /m);
    assert.match(served.body, /^process_resident_memory_bytes \d+/m);
  });
});
