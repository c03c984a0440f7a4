import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { rateLimitHeaders } from '../../src/http/rate-limit.js';
import { RateLimiter } from '../../src/http/rate-limiter.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';

/**
 * The database counters behind the security limits on PostgreSQL (docs/postgres.md, Rate
 * limits), driven directly over the test app's database on either engine: two limiters stand
 * for two nodes.
 */
describe('rate limit counters in the database', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const rule = { limit: 8, windowSec: 60, acrossNodes: true };
  const nodes = (clock: ManualClock, logs: string[] = []) => {
    const logger = createLogger('warn', (line) => logs.push(line));
    return [
      new RateLimiter(1, clock, { db: t.app.kernel.db, logger }),
      new RateLimiter(1, clock, { db: t.app.kernel.db, logger }),
    ];
  };

  it('20 hits at once through two limiters: exactly 8 allowed, each count told once', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const [a, b] = nodes(clock);
    const decisions = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).charge('auth.login|ip:198.51.100.7', rule)),
    );
    assert.equal(decisions.filter((d) => d.allowed).length, 8);
    const remaining = decisions
      .filter((d) => d.allowed)
      .map((d) => d.remaining)
      .sort((x, y) => x - y);
    assert.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6, 7]);
    for (const d of decisions) {
      assert.equal(d.limit, 8);
      assert.equal(d.resetAt.toISOString(), '2026-03-01T10:01:00.000Z');
    }
    // Read without counting, from the other node: spent, and the refusal's Retry-After.
    const read = await a.read('auth.login|ip:198.51.100.7', rule);
    assert.equal(read.allowed, false);
    assert.equal(rateLimitHeaders(read, clock.now().getTime())['Retry-After'], '60');
    assert.equal((await b.read('auth.login|ip:198.51.100.7', rule)).allowed, false);
  });

  it('a new window once the old one ends; other buckets and the memory-only rules are apart', async () => {
    const clock = new ManualClock('2026-03-01T11:00:00Z');
    const [a, b] = nodes(clock);
    for (let i = 0; i < 8; i++) await a.charge('k|ip:1', rule);
    // Spent exactly: a read says the next one is refused.
    const spent = await b.read('k|ip:1', rule);
    assert.equal(spent.allowed, false);
    assert.equal(spent.remaining, 0);
    assert.equal((await b.charge('k|ip:1', rule)).allowed, false);
    assert.equal((await b.charge('k|ip:2', rule)).remaining, 7);
    // A rule not marked acrossNodes counts in this node's memory only.
    const local = { limit: 8, windowSec: 60 };
    assert.equal((await a.charge('k|ip:1', local)).remaining, 7);
    assert.equal((await b.charge('k|ip:1', local)).remaining, 7);
    clock.advance(60_000);
    const fresh = await b.charge('k|ip:1', rule);
    assert.equal(fresh.allowed, true);
    assert.equal(fresh.remaining, 7);
    assert.equal(fresh.resetAt.toISOString(), '2026-03-01T11:02:00.000Z');
    assert.equal((await a.read('k|ip:1', rule)).remaining, 7);
  });

  it('when the database fails, the memory counter answers and the failure is logged once', async () => {
    const clock = new ManualClock('2026-03-01T12:00:00Z');
    const logs: string[] = [];
    const logger = createLogger('warn', (line) => logs.push(line));
    // A schema that does not exist: every statement fails, as with the database down.
    const broken = new RateLimiter(1, clock, { db: t.app.kernel.db.withSchema('gantry_missing'), logger });
    const decisions = [];
    for (let i = 0; i < 9; i++) decisions.push(await broken.charge('k|ip:3', rule));
    assert.deepEqual(
      decisions.map((d) => d.allowed),
      [true, true, true, true, true, true, true, true, false],
    );
    assert.equal((await broken.read('k|ip:3', rule)).allowed, false);
    const warnings = logs.filter((l) => l.includes('rate limit counters unavailable'));
    assert.equal(warnings.length, 1);
  });
});
