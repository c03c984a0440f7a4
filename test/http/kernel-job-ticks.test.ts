import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { collectJobs } from '../../src/app.js';
import { claimJobTick } from '../../src/db/store/job-ticks.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { createLogger } from '../../src/lib/logger.js';
import { Metrics } from '../../src/lib/metrics.js';

describe('periodic jobs across nodes (docs/scaling.md, Periodic jobs)', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('a tick is claimed once: the same tick again or an older one is refused, a later one is granted', async () => {
    const { db } = t.app.kernel;
    const now = new Date().toISOString();
    assert.equal(await claimJobTick(db, 'test.claim', '2026-01-01T00:00:10.000Z', now), true);
    assert.equal(await claimJobTick(db, 'test.claim', '2026-01-01T00:00:10.000Z', now), false);
    assert.equal(await claimJobTick(db, 'test.claim', '2026-01-01T00:00:05.000Z', now), false);
    assert.equal(await claimJobTick(db, 'test.claim', '2026-01-01T00:00:20.000Z', now), true);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => claimJobTick(db, 'test.claim', '2026-01-01T00:00:30.000Z', now)),
    );
    assert.equal(results.filter(Boolean).length, 1);
  });

  it('two schedulers on one database run a cluster job once per tick and a node job on both', async () => {
    const { db, clock } = t.app.kernel;
    const runs = { cluster: [] as string[], node: 0 };
    const jobs = [
      {
        name: 'test.cluster-tick',
        pattern: '* * * * * *',
        scope: 'cluster' as const,
        run: async () => void runs.cluster.push('ran'),
      },
      { name: 'test.node-tick', pattern: '* * * * * *', scope: 'node' as const, run: async () => void runs.node++ },
    ];
    const claimed: string[] = [];
    const claim = async (job: string, tick: Date) => {
      const mine = await claimJobTick(db, job, tick.toISOString(), clock.now().toISOString());
      if (mine) claimed.push(tick.toISOString());
      return mine;
    };
    const schedulers = [0, 1].map(
      () =>
        new Scheduler(
          jobs,
          clock,
          createLogger('silent'),
          new Metrics('/nonexistent/x.db', { processMetrics: false }),
          claim,
        ),
    );
    for (const s of schedulers) s.start();
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    await Promise.all(schedulers.map((s) => s.stop()));
    assert.ok(runs.cluster.length >= 2, `ran ${runs.cluster.length} ticks`);
    assert.equal(runs.cluster.length, claimed.length);
    assert.equal(new Set(claimed).size, claimed.length, `one run per tick: ${claimed.join(' ')}`);
    assert.ok(runs.node >= 2 * (runs.cluster.length - 1), `node job ran ${runs.node} times on two nodes`);
  });

  it('every registered job says its scope; in-memory work runs on every node', () => {
    const jobs = collectJobs(t.app);
    const scopes = Object.fromEntries(jobs.map((j) => [j.name, j.scope]));
    assert.equal(scopes['status.projection-refresh'], 'node');
    assert.equal(scopes['ai.provider-health'], 'node');
    assert.equal(scopes['kernel.mail-delivery'], 'cluster');
    assert.equal(scopes['accounts.purge-deleted'], 'cluster');
    for (const job of jobs) assert.ok(job.scope === 'cluster' || job.scope === 'node', job.name);
  });
});
