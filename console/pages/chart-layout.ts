/**
 * Delivery charts as plain data: periods, bars, the stacked chart's geometry, the sparkline's, and
 * the same figures in words and as table rows. No DOM here (`charts.ts` draws what this lays out),
 * so every number a chart shows is unit-tested (test/domain/console-charts.test.ts).
 */
import { OUTCOMES, type Outcome } from '../../functions/domain/stats/outcomes.js';

export { OUTCOMES, type Outcome };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** What the chart can show: the last hour by minute, the day by hour, the week by 6 hours (hourly counts summed here). */
export const PERIODS = {
  hour: { label: 'Last hour', words: 'in the last hour', bucket: 'minute', bucketMs: MINUTE, buckets: 60, barMs: MINUTE },
  day: { label: 'Last day', words: 'in the last day', bucket: 'hour', bucketMs: HOUR, buckets: 24, barMs: HOUR },
  week: { label: 'Last week', words: 'in the last week', bucket: 'hour', bucketMs: HOUR, buckets: 168, barMs: 6 * HOUR },
} as const;
export type Period = keyof typeof PERIODS;

/** The colour of each outcome: a legend names them, and the table and the words give the same figures without colour. */
export const OUTCOME_COLORS: Record<Outcome, string> = {
  succeeded: '#1f6f43',
  failed: '#a4161a',
  refused: '#c9600c',
  ignored: '#7d8590',
  duplicate: '#7b5ea7',
  handshake: '#2f6fb0',
  queued: '#d4a20a',
};

/** One bucket as `GET /triggers/{id}/stats` answers it. */
export type StatsBucket = Record<Outcome, number> & { start: string; total: number };
/** One bar: the counts of `[start, end)`, epoch ms. */
export type Bar = Record<Outcome, number> & { start: number; end: number; total: number };

/**
 * The query for a period ending with the bucket `nowMs` is in. Bars of several buckets start on
 * whole multiples of their length (UTC), so a bar always stands for the same six hours.
 */
export function periodQuery(period: Period, nowMs: number): { since: string; until: string; bucket: 'minute' | 'hour' } {
  const { bucketMs, buckets, barMs, bucket } = PERIODS[period];
  const until = Math.floor(nowMs / bucketMs) * bucketMs + bucketMs;
  const since = Math.floor((until - buckets * bucketMs) / barMs) * barMs;
  return { since: new Date(since).toISOString(), until: new Date(until).toISOString(), bucket };
}

const zeroBar = (start: number, end: number): Bar => ({ start, end, total: 0, ...Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number> });

/** Buckets summed into bars of `barMs` (several triggers' buckets too), oldest first. */
export function barsOf(buckets: readonly StatsBucket[], barMs: number): Bar[] {
  const bars = new Map<number, Bar>();
  for (const bucket of buckets) {
    const start = Math.floor(Date.parse(bucket.start) / barMs) * barMs;
    let bar = bars.get(start);
    if (!bar) bars.set(start, (bar = zeroBar(start, start + barMs)));
    for (const outcome of OUTCOMES) bar[outcome] += bucket[outcome];
    bar.total += bucket.total;
  }
  return [...bars.values()].sort((a, b) => a.start - b.start);
}

/** The sum of bars: a period's totals. */
export function totalsOf(bars: readonly Bar[]): Bar {
  const totals = zeroBar(bars[0]?.start ?? 0, bars.at(-1)?.end ?? 0);
  for (const bar of bars) {
    for (const outcome of OUTCOMES) totals[outcome] += bar[outcome];
    totals.total += bar.total;
  }
  return totals;
}

/** Failed runs and refused deliveries over all deliveries; undefined when there were none. */
export const failureRate = (counts: Pick<Bar, 'failed' | 'refused' | 'total'>): number | undefined =>
  counts.total === 0 ? undefined : (counts.failed + counts.refused) / counts.total;

export const percent = (rate: number): string => `${rate > 0 && rate < 0.01 ? '<1' : Math.round(rate * 100)}%`;

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** The period in words: "12 deliveries in the last day: 7 succeeded, 2 failed, 3 refused. 42% failed or were refused." */
export function summaryWords(totals: Bar, periodWords: string): string {
  if (totals.total === 0) return `No deliveries ${periodWords}.`;
  const parts = OUTCOMES.filter((o) => totals[o] !== 0).map((o) => `${totals[o].toLocaleString('en')} ${o === 'queued' ? 'waiting for a retry' : o}`);
  const rate = failureRate(totals)!;
  return `${plural(totals.total, 'delivery', 'deliveries')} ${periodWords}: ${parts.join(', ')}. ` +
    (rate === 0 ? 'None failed or was refused.' : `Failure rate ${percent(rate)} (failed or refused).`);
}

/** A scale from 0 whose top is a round number with at most five ticks: 1, 2, 5 times a power of ten. */
export function niceScale(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 1, step: 1 };
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!);
  return { top: Math.ceil(max / step) * step, step };
}

export interface Segment {
  outcome: Outcome;
  count: number;
  x: number;
  y: number;
  width: number;
  height: number;
  bar: Bar;
}
export interface ChartLayout {
  width: number;
  height: number;
  plot: { left: number; top: number; width: number; height: number };
  segments: Segment[];
  /** Horizontal gridlines with their values, bottom up. */
  yTicks: { y: number; value: number }[];
  /** Labelled bars: a few, evenly spread. */
  xTicks: { x: number; bar: Bar }[];
}

const WIDTH = 720;
const HEIGHT = 260;
const MARGIN = { left: 56, right: 12, top: 12, bottom: 48 };
/** Even a count of one shows: no segment is thinner than this (in the chart's units). */
const MIN_SEGMENT = 2;

/** The stacked bar chart: each bar's outcomes bottom up in the order of OUTCOMES, scaled to the highest bar. */
export function layoutBarChart(bars: readonly Bar[], maxXTicks = 6): ChartLayout {
  const plot = { left: MARGIN.left, top: MARGIN.top, width: WIDTH - MARGIN.left - MARGIN.right, height: HEIGHT - MARGIN.top - MARGIN.bottom };
  const { top, step } = niceScale(Math.max(0, ...bars.map((bar) => bar.total)));
  const slot = plot.width / Math.max(1, bars.length);
  const barWidth = Math.max(1, slot * 0.8);
  const scale = plot.height / top;
  const bottom = plot.top + plot.height;
  const segments: Segment[] = [];
  bars.forEach((bar, i) => {
    let y = bottom;
    const x = plot.left + i * slot + (slot - barWidth) / 2;
    for (const outcome of OUTCOMES) {
      const count = bar[outcome];
      if (count <= 0) continue;
      const height = Math.max(MIN_SEGMENT, count * scale);
      y -= height;
      segments.push({ outcome, count, x, y, width: barWidth, height, bar });
    }
  });
  const yTicks = Array.from({ length: top / step + 1 }, (_, i) => ({ value: i * step, y: bottom - i * step * scale }));
  const every = Math.max(1, Math.ceil(bars.length / maxXTicks));
  const xTicks = bars.flatMap((bar, i) => (i % every === 0 ? [{ x: plot.left + i * slot + slot / 2, bar }] : []));
  return { width: WIDTH, height: HEIGHT, plot, segments, yTicks, xTicks };
}

/** The sparkline: one thin bar per hour, its failed and refused part on top, scaled to the busiest hour. */
export function layoutSparkline(bars: readonly Bar[], size = { width: 120, height: 28 }): { width: number; height: number; bars: { x: number; width: number; ok: { y: number; height: number }; bad: { y: number; height: number } }[] } {
  const max = Math.max(1, ...bars.map((bar) => bar.total));
  const slot = size.width / Math.max(1, bars.length);
  return {
    ...size,
    bars: bars.map((bar, i) => {
      const bad = bar.failed + bar.refused;
      const total = bar.total === 0 ? 0 : Math.max(1, (bar.total / max) * size.height);
      const badHeight = bar.total === 0 ? 0 : (bad / bar.total) * total;
      return {
        x: i * slot,
        width: Math.max(1, slot - 1),
        ok: { y: size.height - total, height: total - badHeight },
        bad: { y: size.height - total, height: badHeight },
      };
    }),
  };
}

/** How a bar's period reads: "14:05", "Mon 14:00", in the browser's time zone (or `timeZone`). */
export function timeLabel(ms: number, period: Period, timeZone?: string): string {
  const options: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', ...(period === 'week' && { weekday: 'short' }), ...(timeZone && { timeZone }) };
  return new Intl.DateTimeFormat('en', options).format(ms);
}

/** A bar's period in words: "14:05 to 14:06". */
export const barPeriod = (bar: Pick<Bar, 'start' | 'end'>, period: Period, timeZone?: string): string =>
  `${timeLabel(bar.start, period, timeZone)} to ${timeLabel(bar.end, period, timeZone)}`;

/** A segment's name, for its link and tooltip: "3 refused, 14:00 to 15:00". */
export const segmentLabel = (segment: Pick<Segment, 'outcome' | 'count' | 'bar'>, period: Period, timeZone?: string): string =>
  `${segment.count.toLocaleString('en')} ${segment.outcome === 'queued' ? 'waiting for a retry' : segment.outcome}, ${barPeriod(segment.bar, period, timeZone)}`;

/** The figures as table rows: the period, then each outcome, then the total. */
export const tableRows = (bars: readonly Bar[], period: Period, timeZone?: string): string[][] =>
  bars.map((bar) => [barPeriod(bar, period, timeZone), ...OUTCOMES.map((o) => String(bar[o])), String(bar.total)]);
