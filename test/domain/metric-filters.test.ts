import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/manifest.js';
import { METRIC_TABLE, metricFilterOf, metricFiltersOf, metricsFromLine, parseFilterPattern } from '../../functions/shared/metric-filters.js';
import { METRIC, type MetricName } from '../../functions/shared/metric-names.js';

/** The local stack's evaluator of the filters the table makes: it must read them as CloudWatch does, or local metrics lie. */
describe('metric filters, as the local stack evaluates them', () => {
  const webhook = metricFiltersOf('webhook');

  it('the table has a row for every metric, each written by at least one function of the manifest', () => {
    expect(Object.keys(METRIC_TABLE).sort()).toEqual(Object.values(METRIC).sort());
    for (const [name, row] of Object.entries(METRIC_TABLE)) {
      expect(row.writers.length, name).toBeGreaterThan(0);
      for (const fn of row.writers) expect(Object.keys(FUNCTIONS), name).toContain(fn);
    }
  });

  it('every filter the table makes is a pattern the evaluator reads, and names the service, the metric and its dimension', () => {
    for (const name of Object.keys(METRIC_TABLE) as MetricName[]) {
      const filter = metricFilterOf(name);
      const terms = parseFilterPattern(filter.filterPattern);
      expect(terms.map((t) => t.field), name).toEqual(['service', name, ...(METRIC_TABLE[name].dimension ? [METRIC_TABLE[name].dimension] : [])]);
    }
    expect(metricFilterOf('WebhooksRefused').filterPattern).toBe('{ ($.service = "flowgate") && ($.WebhooksRefused >= 0) && ($.reason = "*") }');
  });

  it('refuses a pattern outside the subset the table makes, rather than reading it wrongly', () => {
    expect(() => parseFilterPattern('{ ($.a = 1) || ($.b = 2) }')).toThrow(/not a term/);
    expect(() => parseFilterPattern('{ $.a = "x" }')).toThrow(/not a term/);
    expect(() => parseFilterPattern('ERROR')).toThrow(/not a JSON filter pattern/);
  });

  it('a line of another service, without the service, or not JSON makes no metric', () => {
    expect(metricsFromLine(webhook, '{"service":"other","WebhooksReceived":1}')).toEqual([]);
    expect(metricsFromLine(webhook, '{"WebhooksReceived":1}')).toEqual([]);
    expect(metricsFromLine(webhook, 'WebhooksReceived 1')).toEqual([]);
    expect(metricsFromLine(webhook, '[{"service":"flowgate","WebhooksReceived":1}]')).toEqual([]);
  });

  it('a metric member must be a number, and a dimensioned metric needs its dimension member', () => {
    expect(metricsFromLine(webhook, '{"service":"flowgate","WebhooksReceived":"1"}')).toEqual([]);
    expect(metricsFromLine(webhook, '{"service":"flowgate","WebhooksRefused":1}')).toEqual([]);
    expect(metricsFromLine(webhook, '{"service":"flowgate","WebhooksRefused":1,"reason":"not_found"}').map((d) => d.dimensions)).toEqual([{ service: 'flowgate', reason: 'not_found' }]);
  });

  it('a function\'s filters read only the metrics it writes: the receiver\'s log group makes no replay count', () => {
    expect(metricsFromLine(webhook, '{"service":"flowgate","DeliveriesReplayed":2}')).toEqual([]);
    expect(metricsFromLine(metricFiltersOf('triggers'), '{"service":"flowgate","DeliveriesReplayed":2}').map((d) => [d.name, d.value])).toEqual([['DeliveriesReplayed', 2]]);
  });

  it('the service logger\'s lines (Powertools, `service` flowgate too) make no metric', () => {
    const logged = JSON.stringify({ level: 'ERROR', message: 'request failed', timestamp: '2026-11-28T07:00:00.000Z', service: 'flowgate', sampling_rate: 0, error: { name: 'Error', message: 'boom' }, trigger: 't', reason: 'x' });
    for (const fn of Object.keys(FUNCTIONS)) expect(metricsFromLine(metricFiltersOf(fn), logged)).toEqual([]);
  });
});
