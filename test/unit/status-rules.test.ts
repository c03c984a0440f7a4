import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  headlineOf,
  impactStatus,
  incidentMoveAllowed,
  indicatorOf,
  maintenanceMoveAllowed,
  maintenanceStatusAt,
  worstOf,
} from '../../src/status/rules.js';
import { componentUptime, toMinutes, toPercent, worstFigure, type HistoryPoint } from '../../src/status/uptime.js';
import { noneMatchHits, parseHttpDate } from '../../src/status/http-cache.js';

const T = (iso: string) => Date.parse(iso);
const H = 3_600_000;

describe('status rollup rules', () => {
  it('worst of: major > partial > degraded > maintenance > operational', () => {
    assert.equal(worstOf([]), 'operational');
    assert.equal(worstOf(['operational', 'maintenance']), 'maintenance');
    assert.equal(worstOf(['maintenance', 'degraded_performance']), 'degraded_performance');
    assert.equal(worstOf(['degraded_performance', 'partial_outage', 'operational']), 'partial_outage');
    assert.equal(worstOf(['partial_outage', 'major_outage', 'maintenance']), 'major_outage');
  });

  it('indicator per status (Statuspage)', () => {
    assert.deepEqual(
      ['operational', 'degraded_performance', 'partial_outage', 'major_outage', 'maintenance'].map((s) =>
        indicatorOf(s as never),
      ),
      ['none', 'minor', 'major', 'critical', 'maintenance'],
    );
  });

  it('headline per status', () => {
    assert.equal(headlineOf('operational'), 'All Systems Operational');
    assert.equal(headlineOf('degraded_performance'), 'Partially Degraded Service');
    assert.equal(headlineOf('partial_outage'), 'Partial System Outage');
    assert.equal(headlineOf('major_outage'), 'Major System Outage');
    assert.equal(headlineOf('maintenance'), 'Service Under Maintenance');
  });

  it('incident impact maps to a status', () => {
    assert.equal(impactStatus('minor'), 'degraded_performance');
    assert.equal(impactStatus('partial'), 'partial_outage');
    assert.equal(impactStatus('major'), 'major_outage');
  });

  it('incident moves: postmortem_ready only after resolved, and final', () => {
    assert.equal(incidentMoveAllowed('investigating', 'identified'), true);
    assert.equal(incidentMoveAllowed('monitoring', 'investigating'), true);
    assert.equal(incidentMoveAllowed('investigating', 'postmortem_ready'), false);
    assert.equal(incidentMoveAllowed('resolved', 'postmortem_ready'), true);
    assert.equal(incidentMoveAllowed('resolved', 'investigating'), true);
    assert.equal(incidentMoveAllowed('postmortem_ready', 'resolved'), false);
  });

  it('maintenance moves and timed status', () => {
    assert.equal(maintenanceMoveAllowed('scheduled', 'in_progress'), true);
    assert.equal(maintenanceMoveAllowed('in_progress', 'scheduled'), false);
    assert.equal(maintenanceMoveAllowed('completed', 'in_progress'), false);
    assert.equal(maintenanceMoveAllowed('cancelled', 'scheduled'), false);
    const s = '2026-01-01T10:00:00.000Z';
    const e = '2026-01-01T12:00:00.000Z';
    assert.equal(maintenanceStatusAt('scheduled', s, e, new Date('2026-01-01T09:59:59.999Z')), 'scheduled');
    assert.equal(maintenanceStatusAt('scheduled', s, e, new Date(s)), 'in_progress');
    assert.equal(maintenanceStatusAt('in_progress', s, e, new Date(e)), 'completed');
    assert.equal(maintenanceStatusAt('scheduled', s, e, new Date('2026-01-02T00:00:00Z')), 'completed');
    assert.equal(maintenanceStatusAt('cancelled', s, e, new Date('2026-01-01T11:00:00Z')), 'cancelled');
  });
});

describe('uptime arithmetic', () => {
  const created = T('2026-01-01T00:00:00Z');
  const end = T('2026-01-02T00:00:00Z');
  const start = end - 24 * H;

  it('all operational is 100%', () => {
    const f = componentUptime([{ status: 'operational', at: created }], created, start, end);
    assert.equal(f.ratio, 1);
    assert.equal(f.downtimeMs, 0);
  });

  it('a major outage counts fully, a partial 30%, degraded and maintenance as up', () => {
    const history: HistoryPoint[] = [
      { status: 'operational', at: created },
      { status: 'major_outage', at: created + 2 * H }, // 1 h major
      { status: 'operational', at: created + 3 * H },
      { status: 'partial_outage', at: created + 10 * H }, // 2 h partial -> 0.6 h
      { status: 'degraded_performance', at: created + 12 * H }, // 2 h degraded -> up
      { status: 'maintenance', at: created + 14 * H }, // 1 h maintenance -> up
      { status: 'operational', at: created + 15 * H },
    ];
    const f = componentUptime(history, created, start, end);
    assert.equal(f.downtimeMs, 1.6 * H);
    assert.equal(f.ratio, 1 - 1.6 / 24);
    assert.equal(toPercent(f.ratio), 93.3333);
    assert.equal(toMinutes(f.downtimeMs), 96);
  });

  it('a window edge cuts an outage in half', () => {
    // Major outage from 22:00 on day 1 to 02:00 on day 2; the 24 h window ends at midnight.
    const history: HistoryPoint[] = [
      { status: 'operational', at: created },
      { status: 'major_outage', at: end - 2 * H },
      { status: 'operational', at: end + 2 * H },
    ];
    const day1 = componentUptime(history, created, start, end);
    assert.equal(day1.downtimeMs, 2 * H);
    const day2 = componentUptime(history, created, end, end + 24 * H);
    assert.equal(day2.downtimeMs, 2 * H);
    // An outage still open at the window's end counts up to the end.
    const open = componentUptime(history.slice(0, 2), created, start, end - H);
    assert.equal(open.downtimeMs, H);
  });

  it('an outage that started before the window counts only from its start', () => {
    const history: HistoryPoint[] = [{ status: 'major_outage', at: created }];
    const f = componentUptime(history, created, created + 12 * H, end);
    assert.equal(f.ratio, 0);
    assert.equal(f.spanMs, 12 * H);
  });

  it('clamps the window to the creation time', () => {
    const born = end - 6 * H;
    const history: HistoryPoint[] = [
      { status: 'operational', at: born },
      { status: 'major_outage', at: end - 3 * H },
    ];
    const f = componentUptime(history, born, end - 30 * 24 * H, end);
    assert.equal(f.spanMs, 6 * H);
    assert.equal(f.ratio, 0.5);
    // Not yet created: no span, 100%.
    const none = componentUptime(history, born, start, born - H);
    assert.deepEqual(none, { ratio: 1, downtimeMs: 0, spanMs: 0 });
  });

  it("a service's figure is its worst component's", () => {
    const good = { ratio: 1, downtimeMs: 0, spanMs: 10 };
    const bad = { ratio: 0.9, downtimeMs: 1, spanMs: 10 };
    assert.equal(worstFigure([good, bad]), bad);
    assert.deepEqual(worstFigure([]), { ratio: 1, downtimeMs: 0, spanMs: 0 });
    assert.deepEqual(worstFigure([{ ratio: 1, downtimeMs: 0, spanMs: 0 }]), { ratio: 1, downtimeMs: 0, spanMs: 0 });
  });
});

describe('HTTP dates and entity tags', () => {
  const now = T('2026-06-01T00:00:00Z');
  it('parses the three HTTP-date forms as UTC', () => {
    const expected = T('1994-11-06T08:49:37Z');
    assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', now), expected);
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', now), expected);
    assert.equal(parseHttpDate('Sun Nov  6 08:49:37 1994', now), expected);
    assert.equal(parseHttpDate('Thursday, 01-Jan-26 00:00:00 GMT', now), T('2026-01-01T00:00:00Z'));
  });
  it('refuses anything else', () => {
    for (const bad of [
      'yesterday',
      '2026-01-01T00:00:00Z',
      'Sun, 31 Feb 2026 00:00:00 GMT',
      'Sun, 06 Nov 1994 08:49:37 PST',
      '',
    ])
      assert.equal(parseHttpDate(bad, now), null, bad);
  });
  it('If-None-Match: *, lists and weak comparison', () => {
    assert.equal(noneMatchHits('*', '"abc"'), true);
    assert.equal(noneMatchHits('"abc"', '"abc"'), true);
    assert.equal(noneMatchHits('W/"abc"', '"abc"'), true);
    assert.equal(noneMatchHits('"x", W/"abc"', '"abc"'), true);
    assert.equal(noneMatchHits('"abcd"', '"abc"'), false);
    assert.equal(noneMatchHits('abc', '"abc"'), false);
  });
});
