/**
 * The dashboard: every trigger of the account at a glance. One chart of all their deliveries by
 * outcome, then each trigger with its activity, its figures and its failure rate, the most
 * failing first, each opening its own page. One request a period: `GET /triggers/stats`.
 */
import { el, pageHeading } from '../dom.js';
import { activityWords, allTriggerStats, chartSection, sparkline, type TriggerStats } from './charts.js';
import { barsOf, failureRate, percent, PERIODS, totalsOf, type Bar, type Period } from './chart-layout.js';
import { deliveriesHash } from './deliveries.js';

export function dashboardPage(): HTMLElement {
  const listing = el('div');
  let lastJson = '';
  // The chart section reads every trigger's counts for its period; the table below shows the same read
  // (rebuilt only when it changed, so a refresh leaves a focused link alone).
  const read = async (period: Period): Promise<Bar[]> => {
    const stats = await allTriggerStats(period);
    const json = JSON.stringify([period, stats]);
    if (json !== lastJson) {
      lastJson = json;
      listing.replaceChildren(triggerRows(stats, period));
    }
    return barsOf(stats.flatMap((s) => s.buckets), PERIODS[period].barMs);
  };
  return el('main', {}, pageHeading('Dashboard'),
    el('p', { class: 'hint' }, 'All your triggers\' deliveries by outcome. A trigger\'s own chart is on its page.'),
    chartSection({ name: 'dashboard-chart', heading: 'All deliveries', read }),
    el('h2', {}, 'By trigger'),
    listing);
}

/** Each trigger's figures for the period, the one with the most failed or refused deliveries first. */
function triggerRows(stats: TriggerStats[], period: Period): HTMLElement {
  if (stats.length === 0) return el('p', {}, 'No triggers yet. ', el('a', { href: '#/triggers' }, 'Create one'), '.');
  const rows = stats.map((s) => ({ s, bars: barsOf(s.buckets, PERIODS[period].barMs) })).map(({ s, bars }) => ({ s, bars, totals: totalsOf(bars) }))
    .sort((a, b) => (b.totals.failed + b.totals.refused) - (a.totals.failed + a.totals.refused) || b.totals.total - a.totals.total);
  return el('table', {}, el('caption', { class: 'hint' }, `Triggers ${PERIODS[period].words}, the most failing first`),
    el('thead', {}, el('tr', {}, ...['Trigger', 'Activity', 'Deliveries', 'Failed or refused', 'Failure rate'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...rows.map(({ s, bars, totals }) => {
      const rate = failureRate(totals);
      return el('tr', {},
        el('th', { scope: 'row' }, el('a', { href: deliveriesHash(s.trigger_id), 'aria-label': `The ${s.name ?? s.flow} trigger (${s.trigger_id.slice(0, 8)})` }, s.name ?? s.flow), ' ',
          (s.name ?? s.flow) === s.flow ? '' : el('span', { class: 'hint' }, `${s.flow} `),
          el('code', { class: 'hint' }, s.trigger_id.slice(0, 8)), s.enabled ? '' : ' (disabled)'),
        el('td', {}, sparkline(bars, `${PERIODS[period].label}: ${activityWords(bars)}`)),
        el('td', {}, totals.total.toLocaleString('en')),
        el('td', {}, (totals.failed + totals.refused).toLocaleString('en')),
        el('td', { class: rate ? 'failing' : '' }, rate === undefined ? '—' : percent(rate)));
    })));
}
