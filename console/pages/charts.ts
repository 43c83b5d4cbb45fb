/**
 * Delivery charts drawn with the console's own SVG helper from `chart-layout.ts`'s geometry: the
 * stacked bar chart (its segments link to the deliveries list of that period and outcome), its
 * legend, the same figures as a table for screen readers and in words, and the sparkline; and the
 * chart section a trigger's page opens with.
 */
import './charts.css';
import { api } from '../api.js';
import { alertRegion, el, svg, withProgress } from '../dom.js';
import { LIST_STATUSES } from '../../functions/domain/stats/outcomes.js';
import {
  barsOf, failureRate, layoutBarChart, layoutSparkline, OUTCOME_COLORS, OUTCOMES, percent, periodQuery, PERIODS, segmentLabel, summaryWords, tableRows, timeLabel, totalsOf,
  type Bar, type Outcome, type Period, type StatsBucket,
} from './chart-layout.js';
import { deliveriesHash } from './deliveries.js';

/** How often an open chart is read again. */
const REFRESH_MS = 15_000;

export interface TriggerStats {
  trigger_id: string;
  /** The trigger's name, or its flow's when it has none (absent from an older API). */
  name?: string;
  flow: string;
  enabled: boolean;
  buckets: StatsBucket[];
}

/** A trigger's counts for a period (`GET /triggers/{id}/stats`). */
export async function triggerBars(triggerId: string, period: Period): Promise<Bar[]> {
  const { buckets } = await api<{ buckets: StatsBucket[] }>('GET', `/triggers/${encodeURIComponent(triggerId)}/stats?${new URLSearchParams(periodQuery(period, Date.now()))}`);
  return barsOf(buckets, PERIODS[period].barMs);
}

/** Every trigger's counts for a period, a page of 100 at a time (`GET /triggers/stats`), at most 500 triggers. */
export async function allTriggerStats(period: Period): Promise<TriggerStats[]> {
  const found: TriggerStats[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ ...periodQuery(period, Date.now()), limit: '100', ...(cursor && { cursor }) });
    const page: { triggers: TriggerStats[]; next_cursor: string | null } = await api('GET', `/triggers/stats?${query}`);
    found.push(...page.triggers);
    cursor = page.next_cursor;
  } while (cursor && found.length < 500);
  return found;
}

/** A colour swatch, as SVG (the CSP allows no inline styles). */
const swatch = (outcome: Outcome) => svg('svg', { width: 12, height: 12, 'aria-hidden': 'true', focusable: 'false' }, svg('rect', { width: 12, height: 12, fill: OUTCOME_COLORS[outcome] }));

export const legend = () => el('ul', { class: 'legend', 'aria-label': 'Legend' },
  ...OUTCOMES.map((outcome) => el('li', {}, swatch(outcome), outcome === 'queued' ? 'queued (waiting for a retry)' : outcome)));

let chartCount = 0;

/**
 * The stacked bar chart of `bars`. With `hrefFor`, each segment is a link (keyboard and pointer)
 * named by its count, outcome and period.
 */
export function barChart(bars: readonly Bar[], period: Period, options: { title: string; hrefFor?: (bar: Bar, outcome: Outcome, period: Period) => string }): SVGSVGElement {
  const id = `chart-${++chartCount}`;
  const layout = layoutBarChart(bars);
  const { plot } = layout;
  const bottom = plot.top + plot.height;
  return svg('svg', { viewBox: `0 0 ${layout.width} ${layout.height}`, class: 'chart', role: 'group', 'aria-labelledby': `${id}-title` },
    svg('title', { id: `${id}-title` }, options.title),
    ...layout.yTicks.flatMap((tick) => [
      svg('line', { x1: plot.left, x2: plot.left + plot.width, y1: tick.y, y2: tick.y, class: tick.value === 0 ? 'axis' : 'grid' }),
      svg('text', { x: plot.left - 6, y: tick.y + 4, 'text-anchor': 'end', class: 'tick' }, tick.value.toLocaleString('en')),
    ]),
    ...layout.xTicks.map((tick) => svg('text', { x: tick.x, y: bottom + 16, 'text-anchor': 'middle', class: 'tick' }, timeLabel(tick.bar.start, period))),
    svg('text', { x: 14, y: plot.top + plot.height / 2, transform: `rotate(-90 14 ${plot.top + plot.height / 2})`, 'text-anchor': 'middle', class: 'axis-label' }, 'Deliveries'),
    svg('text', { x: plot.left + plot.width / 2, y: layout.height - 6, 'text-anchor': 'middle', class: 'axis-label' }, `Time received (${PERIODS[period].bucket === 'minute' ? 'per minute' : period === 'week' ? 'per 6 hours' : 'per hour'})`),
    ...layout.segments.map((segment) => {
      const label = segmentLabel(segment, period);
      const rect = svg('rect', { x: segment.x, y: segment.y, width: segment.width, height: segment.height, fill: OUTCOME_COLORS[segment.outcome] }, svg('title', {}, label));
      return options.hrefFor ? svg('a', { href: options.hrefFor(segment.bar, segment.outcome, period), 'aria-label': label, class: 'segment' }, rect) : rect;
    }));
}

/** The chart's figures as a table: for screen readers (visually hidden), the same numbers as the bars. */
export function statsTable(bars: readonly Bar[], period: Period, caption: string): HTMLTableElement {
  const totals = totalsOf(bars);
  return el('table', { class: 'visually-hidden' }, el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Period'), ...OUTCOMES.map((o) => el('th', { scope: 'col' }, o)), el('th', { scope: 'col' }, 'total'))),
    el('tbody', {}, ...tableRows(bars, period).map(([when, ...figures]) => el('tr', {}, el('th', { scope: 'row' }, when!), ...figures.map((f) => el('td', {}, f))))),
    el('tfoot', {}, el('tr', {}, el('th', { scope: 'row' }, 'All'), ...OUTCOMES.map((o) => el('td', {}, String(totals[o]))), el('td', {}, String(totals.total)))));
}

/** A small chart of a period's activity, failed and refused on top, named by its figures. */
export function sparkline(bars: readonly Bar[], name: string): SVGSVGElement {
  const layout = layoutSparkline(bars);
  return svg('svg', { viewBox: `0 0 ${layout.width} ${layout.height}`, width: layout.width, height: layout.height, class: 'sparkline', role: 'img', 'aria-label': name },
    svg('line', { x1: 0, x2: layout.width, y1: layout.height - 0.5, y2: layout.height - 0.5, class: 'axis' }),
    ...layout.bars.flatMap((bar) => [
      bar.ok.height > 0 && svg('rect', { x: bar.x, y: bar.ok.y + bar.bad.height, width: bar.width, height: bar.ok.height, fill: OUTCOME_COLORS.succeeded }),
      bar.bad.height > 0 && svg('rect', { x: bar.x, y: bar.bad.y, width: bar.width, height: bar.bad.height, fill: OUTCOME_COLORS.failed }),
    ]));
}

/** "12 deliveries, 42% failed or refused": a sparkline's name, and its words beside it. */
export function activityWords(bars: readonly Bar[]): string {
  const totals = totalsOf(bars);
  const rate = failureRate(totals);
  return rate === undefined ? 'No deliveries' : `${totals.total.toLocaleString('en')} ${totals.total === 1 ? 'delivery' : 'deliveries'}, ${percent(rate)} failed or refused`;
}

/** Radio buttons choosing the period; `onChange` is called with the new one. */
export function periodChoice(name: string, initial: Period, onChange: (period: Period) => void): HTMLFieldSetElement {
  return el('fieldset', { class: 'period' }, el('legend', {}, 'Period'),
    ...(Object.keys(PERIODS) as Period[]).map((period) => {
      const input = el('input', { type: 'radio', name, value: period, id: `${name}-${period}`, checked: period === initial, change: () => onChange(period) });
      return el('label', { for: `${name}-${period}`, class: 'check' }, input, PERIODS[period].label);
    }));
}

/**
 * A chart, its words and its table, read by `read` for the chosen period and read again every
 * REFRESH_MS while on the page (rebuilt only when the figures changed, so a focused segment keeps
 * its focus otherwise).
 */
export function chartSection(options: {
  name: string;
  heading: string;
  read: (period: Period) => Promise<Bar[]>;
  hrefFor?: (bar: Bar, outcome: Outcome, period: Period) => string;
  /** The period shown first (default: the last day). */
  period?: Period;
}): HTMLElement {
  let period: Period = options.period ?? 'day';
  let lastJson = '';
  const alert = alertRegion();
  const words = el('p', { class: 'summary' });
  const figure = el('div', { class: 'chart-area', 'aria-busy': 'true' }, el('p', {}, 'Loading the chart…'));
  const draw = (bars: Bar[]) => {
    const json = JSON.stringify([period, bars]);
    if (json === lastJson) return;
    lastJson = json;
    const title = `${options.heading} ${PERIODS[period].words}, by outcome`;
    words.textContent = summaryWords(totalsOf(bars), PERIODS[period].words);
    figure.replaceChildren(barChart(bars, period, { title, hrefFor: options.hrefFor }), statsTable(bars, period, title));
    figure.removeAttribute('aria-busy');
  };
  const load = () => withProgress(figure, alert, async () => draw(await options.read(period)));
  const section = el('section', { class: 'deliveries-chart', 'aria-labelledby': `${options.name}-heading` },
    el('h2', { id: `${options.name}-heading` }, options.heading),
    periodChoice(`${options.name}-period`, period, (chosen) => {
      period = chosen;
      void load();
    }),
    alert, words, figure, legend());
  const tick = () => {
    if (!section.isConnected) return;
    void options.read(period).then(draw, () => undefined).finally(() => setTimeout(tick, REFRESH_MS));
  };
  void load().then(() => setTimeout(tick, REFRESH_MS));
  return section;
}

/**
 * A trigger's chart: its segments open the deliveries list of that period and outcome (the page
 * opens again with the chart on the same period: `chart` in the link).
 */
export const triggerChart = (triggerId: string, period?: string | null) => chartSection({
  name: 'trigger-chart',
  heading: 'Deliveries over time',
  read: (chosen) => triggerBars(triggerId, chosen),
  hrefFor: (bar, outcome, chosen) => deliveriesHash(triggerId, {
    status: LIST_STATUSES[outcome].join(','), since: new Date(bar.start).toISOString(), until: new Date(bar.end).toISOString(), chart: chosen,
  }),
  ...(period && period in PERIODS && { period: period as Period }),
});

/** The last 24 hours of every trigger (for the triggers list); an empty map when the counts cannot be read. */
export async function lastDayActivity(): Promise<Map<string, Bar[]>> {
  const stats = await allTriggerStats('day').catch(() => []);
  return new Map(stats.map((s) => [s.trigger_id, barsOf(s.buckets, PERIODS.day.barMs)]));
}

/** The triggers list's cell: the sparkline and its words. */
export function activityCell(bars: readonly Bar[] | undefined): HTMLElement {
  if (!bars) return el('span', { class: 'hint' }, 'Not available');
  const words = activityWords(bars);
  const rate = failureRate(totalsOf(bars));
  return el('div', { class: 'activity' }, sparkline(bars, `Last 24 hours: ${words}`),
    el('span', { class: rate ? 'activity-words failing' : 'activity-words' }, words));
}
