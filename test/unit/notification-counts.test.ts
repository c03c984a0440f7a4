import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/lib/clock.js';
import { NotificationCounts } from '../../src/notifications/counts.js';

describe('NotificationCounts', () => {
  it('serves a count until the user changes, then recomputes', async () => {
    const counts = new NotificationCounts(new ManualClock());
    let computed = 0;
    const compute = async () => ({ count: ++computed, nextExpiry: null });
    assert.equal(await counts.get('u1', 'unread', compute), 1);
    assert.equal(await counts.get('u1', 'unread', compute), 1);
    counts.invalidate('u2');
    assert.equal(await counts.get('u1', 'unread', compute), 1);
    counts.invalidate('u1');
    assert.equal(await counts.get('u1', 'unread', compute), 2);
    counts.invalidate(null);
    assert.equal(await counts.get('u1', 'unread', compute), 3);
  });

  it('never stores a count computed while a change happened', async () => {
    const counts = new NotificationCounts(new ManualClock());
    let computed = 0;
    const racing = async () => {
      computed++;
      counts.invalidate('u1'); // a write commits while this count is being read
      return { count: 10, nextExpiry: null };
    };
    assert.equal(await counts.get('u1', 'unread', async () => ({ count: 0, nextExpiry: null })), 0);
    counts.invalidate('u1');
    assert.equal(await counts.get('u1', 'unread', racing), 10);
    assert.equal(await counts.get('u1', 'unread', async () => ({ count: 11, nextExpiry: null })), 11);
    assert.equal(computed, 1);
  });

  it('expires a count at the soonest expiry among the counted rows, and after 60 s at most', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    const counts = new NotificationCounts(clock);
    let n = 5;
    const compute = async () => ({ count: n, nextExpiry: '2026-01-01T00:00:10.000Z' });
    assert.equal(await counts.get('u1', 'unread', compute), 5);
    n = 4;
    clock.advance(9_999);
    assert.equal(await counts.get('u1', 'unread', compute), 5);
    clock.advance(1);
    assert.equal(await counts.get('u1', 'unread', async () => ({ count: 4, nextExpiry: null })), 4);
    clock.advance(59_999);
    assert.equal(await counts.get('u1', 'unread', async () => ({ count: 99, nextExpiry: null })), 4);
    clock.advance(1);
    assert.equal(await counts.get('u1', 'unread', async () => ({ count: 3, nextExpiry: null })), 3);
  });
});
