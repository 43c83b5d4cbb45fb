import { describe, expect, it } from 'vitest';
import {
  barPeriod, barsOf, failureRate, layoutBarChart, layoutSparkline, niceScale, OUTCOMES, periodQuery, segmentLabel, summaryWords, tableRows, totalsOf, type Bar, type StatsBucket,
} from '../../console/pages/chart-layout.js';

/** The console's delivery charts as data: every number the SVG, the table and the words show. */
const T0 = Date.parse('2026-05-04T10:00:00.000Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const bucket = (start: number, counts: Partial<Record<(typeof OUTCOMES)[number], number>>): StatsBucket => {
  const full = Object.fromEntries(OUTCOMES.map((o) => [o, counts[o] ?? 0])) as Record<(typeof OUTCOMES)[number], number>;
  return { start: new Date(start).toISOString(), ...full, total: Object.values(full).reduce((a, b) => a + b, 0) };
};
const bars = (...counts: Partial<Record<(typeof OUTCOMES)[number], number>>[]): Bar[] => barsOf(counts.map((c, i) => bucket(T0 + i * HOUR, c)), HOUR);

describe('periods', () => {
  it('the last hour is 60 minutes ending with the current one; the day 24 hours ending with the current one', () => {
    expect(periodQuery('hour', T0 + 30 * MINUTE + 5_000)).toEqual({ bucket: 'minute', since: '2026-05-04T09:31:00.000Z', until: '2026-05-04T10:31:00.000Z' });
    expect(periodQuery('day', T0 + 30 * MINUTE)).toEqual({ bucket: 'hour', since: '2026-05-03T11:00:00.000Z', until: '2026-05-04T11:00:00.000Z' });
  });

  it('the week starts on a whole 6 hours (UTC), so each bar always stands for the same six hours', () => {
    const { since, until, bucket: size } = periodQuery('week', T0 + 30 * MINUTE);
    expect([since, until, size]).toEqual(['2026-04-27T06:00:00.000Z', '2026-05-04T11:00:00.000Z', 'hour']);
    const hourly = Array.from({ length: (Date.parse(until) - Date.parse(since)) / HOUR }, (_, i) => bucket(Date.parse(since) + i * HOUR, { succeeded: 1 }));
    const sixHourly = barsOf(hourly, 6 * HOUR);
    expect(sixHourly).toHaveLength(29);
    expect(sixHourly.slice(0, -1).every((bar) => bar.succeeded === 6 && bar.end - bar.start === 6 * HOUR)).toBe(true);
    expect(sixHourly.at(-1)).toMatchObject({ start: Date.parse('2026-05-04T06:00:00.000Z'), succeeded: 5 });
  });
});

describe('bars, totals and words', () => {
  it('sums buckets into bars, and several triggers\' buckets into one chart', () => {
    const merged = barsOf([bucket(T0, { succeeded: 2 }), bucket(T0, { failed: 1 }), bucket(T0 + HOUR, { refused: 3 })], HOUR);
    expect(merged.map((b) => [b.start, b.succeeded, b.failed, b.refused, b.total])).toEqual([[T0, 2, 1, 0, 3], [T0 + HOUR, 0, 0, 3, 3]]);
    expect(totalsOf(merged)).toMatchObject({ succeeded: 2, failed: 1, refused: 3, total: 6, start: T0, end: T0 + 2 * HOUR });
  });

  it('the failure rate is failed and refused over all deliveries', () => {
    expect(failureRate(totalsOf(bars({ succeeded: 7, failed: 2, refused: 3 })))).toBeCloseTo(5 / 12);
    expect(failureRate(totalsOf(bars({})))).toBeUndefined();
  });

  it('says the period in words, naming only the outcomes there were', () => {
    expect(summaryWords(totalsOf(bars({ succeeded: 7, failed: 2, refused: 3 })), 'in the last day'))
      .toBe('12 deliveries in the last day: 7 succeeded, 2 failed, 3 refused. Failure rate 42% (failed or refused).');
    expect(summaryWords(totalsOf(bars({ succeeded: 1 })), 'in the last hour')).toBe('1 delivery in the last hour: 1 succeeded. None failed or was refused.');
    expect(summaryWords(totalsOf(bars({ succeeded: 999, failed: 1, queued: 2 })), 'in the last week'))
      .toBe('1,002 deliveries in the last week: 999 succeeded, 1 failed, 2 waiting for a retry. Failure rate <1% (failed or refused).');
    expect(summaryWords(totalsOf(bars({})), 'in the last hour')).toBe('No deliveries in the last hour.');
  });

  it('the table has a row per bar: its period, each outcome in order, its total', () => {
    expect(tableRows(bars({ succeeded: 7, failed: 2 }, { refused: 3 }), 'day', 'UTC')).toEqual([
      ['10:00 to 11:00', '7', '2', '0', '0', '0', '0', '0', '9'],
      ['11:00 to 12:00', '0', '0', '3', '0', '0', '0', '0', '3'],
    ]);
    expect(barPeriod({ start: T0, end: T0 + 6 * HOUR }, 'week', 'UTC')).toBe('Mon 10:00 to Mon 16:00');
  });
});

describe('the stacked bar chart', () => {
  it('a round scale: 1, 2 or 5 times a power of ten, at most five steps', () => {
    expect(niceScale(0)).toEqual({ top: 1, step: 1 });
    expect(niceScale(3)).toEqual({ top: 3, step: 1 });
    expect(niceScale(12)).toEqual({ top: 15, step: 5 });
    expect(niceScale(97)).toEqual({ top: 100, step: 50 });
    expect(niceScale(1234)).toEqual({ top: 1500, step: 500 });
  });

  it('stacks each bar\'s outcomes bottom up in the legend\'s order, heights proportional to the counts', () => {
    const layout = layoutBarChart(bars({ succeeded: 7, failed: 2, refused: 3 }, {}, { succeeded: 15 }));
    const bottom = layout.plot.top + layout.plot.height;
    const first = layout.segments.filter((s) => s.bar.start === T0);
    expect(first.map((s) => [s.outcome, s.count])).toEqual([['succeeded', 7], ['failed', 2], ['refused', 3]]);
    // Scale: top 15 over the plot's height.
    const unit = layout.plot.height / 15;
    expect(first[0]!.height).toBeCloseTo(7 * unit);
    expect(first[0]!.y + first[0]!.height).toBeCloseTo(bottom);
    expect(first[1]!.y + first[1]!.height).toBeCloseTo(first[0]!.y);
    expect(first[2]!.y + first[2]!.height).toBeCloseTo(first[1]!.y);
    // The empty bar has no segment; the tallest reaches the top.
    expect(layout.segments.filter((s) => s.bar.start === T0 + HOUR)).toEqual([]);
    expect(layout.segments.find((s) => s.bar.start === T0 + 2 * HOUR)!.y).toBeCloseTo(layout.plot.top);
    expect(layout.yTicks.map((t) => t.value)).toEqual([0, 5, 10, 15]);
    expect(layout.yTicks.at(-1)!.y).toBeCloseTo(layout.plot.top);
  });

  it('a count of one is still visible beside thousands; bars share the width; a few bars are labelled', () => {
    const many = bars(...Array.from({ length: 24 }, (_, i) => (i === 3 ? { succeeded: 5000, failed: 1 } : { succeeded: 10 })));
    const layout = layoutBarChart(many);
    expect(layout.segments.find((s) => s.outcome === 'failed')!.height).toBeGreaterThanOrEqual(2);
    const xs = layout.segments.filter((s) => s.outcome === 'succeeded').map((s) => s.x);
    expect(new Set(xs).size).toBe(24);
    expect(Math.max(...xs) + layout.segments[0]!.width).toBeLessThanOrEqual(layout.plot.left + layout.plot.width);
    expect(layout.xTicks.map((t) => t.bar.start)).toEqual([0, 4, 8, 12, 16, 20].map((i) => T0 + i * HOUR));
  });

  it('names each segment by its count, outcome and period', () => {
    const [segment] = layoutBarChart(bars({ refused: 3 })).segments;
    expect(segmentLabel(segment!, 'day', 'UTC')).toBe('3 refused, 10:00 to 11:00');
    expect(segmentLabel({ ...segment!, outcome: 'queued', count: 1 }, 'day', 'UTC')).toBe('1 waiting for a retry, 10:00 to 11:00');
  });
});

describe('the sparkline', () => {
  it('one bar per hour scaled to the busiest, its failed and refused part on top', () => {
    const layout = layoutSparkline(bars({ succeeded: 8, failed: 1, refused: 1 }, {}, { succeeded: 5 }), { width: 30, height: 20 });
    expect(layout.bars).toHaveLength(3);
    const [busy, empty, half] = layout.bars;
    expect(busy).toEqual({ x: 0, width: 9, ok: { y: 0, height: 16 }, bad: { y: 0, height: 4 } });
    expect(empty!.ok.height + empty!.bad.height).toBe(0);
    expect(half).toMatchObject({ x: 20, ok: { y: 10, height: 10 }, bad: { height: 0 } });
  });
});
