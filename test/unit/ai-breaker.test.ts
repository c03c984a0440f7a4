import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CircuitBreaker, STATUS_OF } from '../../src/ai/breaker.js';
import { ManualClock } from '../../src/lib/clock.js';

describe('circuit breaker', () => {
  it('maps states to the documented statuses', () => {
    assert.deepEqual(STATUS_OF, { closed: 'healthy', 'half-open': 'degraded', open: 'unavailable' });
  });

  it('opens after N consecutive failures; a success in between resets the count', () => {
    const clock = new ManualClock();
    const b = new CircuitBreaker({ threshold: 3, cooldownMs: 30_000 }, clock);
    b.failure();
    b.failure();
    b.success();
    b.failure();
    b.failure();
    assert.equal(b.state(), 'closed');
    assert.equal(b.tryAcquire(), true);
    b.failure();
    assert.equal(b.state(), 'open');
    assert.equal(b.tryAcquire(), false);
    assert.equal(b.snapshot().retryAt?.toISOString(), new Date(clock.now().getTime() + 30_000).toISOString());
  });

  it('half-opens after the cool-down, lets one probe through, closes on its success', () => {
    const clock = new ManualClock();
    const b = new CircuitBreaker({ threshold: 1, cooldownMs: 1000 }, clock);
    b.failure();
    clock.advance(999);
    assert.equal(b.state(), 'open');
    clock.advance(1);
    assert.equal(b.state(), 'half-open');
    assert.equal(b.tryAcquire(), true, 'the probe');
    assert.equal(b.tryAcquire(), false, 'only one probe at a time');
    b.success();
    assert.equal(b.state(), 'closed');
    assert.equal(b.snapshot().consecutiveFailures, 0);
    assert.equal(b.snapshot().lastCheckedAt?.toISOString(), clock.now().toISOString());
  });

  it('reopens when the probe fails, restarting the cool-down', () => {
    const clock = new ManualClock();
    const b = new CircuitBreaker({ threshold: 2, cooldownMs: 1000 }, clock);
    b.failure();
    b.failure();
    clock.advance(1000);
    assert.equal(b.tryAcquire(), true);
    b.failure();
    assert.equal(b.state(), 'open');
    clock.advance(999);
    assert.equal(b.state(), 'open');
    clock.advance(1);
    assert.equal(b.state(), 'half-open');
    b.release();
    assert.equal(b.tryAcquire(), true, 'a released probe slot can be taken again');
  });
});
